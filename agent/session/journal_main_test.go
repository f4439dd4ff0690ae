// This file holds the package's TestMain: goroutine leak checks, and the
// re-executed helper process the crash test kills.

package session

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// crashHelperEnv, when set to a directory, turns the test binary into the
// crash helper instead of running tests.
const crashHelperEnv = "DSHD_SESSION_CRASH_HELPER"

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashHelperEnv); dir != "" {
		os.Exit(crashHelper(dir))
	}
	goleak.VerifyTestMain(m)
}

// crashHelper appends numbered update records to session "crash" in dir,
// syncing every tenth and then telling its parent on stdout ("synced N"),
// until its parent kills it. After a bounded number of records it waits
// on stdin, so a parent that never kills it does not fill the disk.
func crashHelper(dir string) int {
	store, err := NewStore(dir, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	j, err := store.Create(Meta{SessionID: "crash", Cwd: "/work"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	out := bufio.NewWriter(os.Stdout)
	for i := range 100_000 {
		if err := j.Append(KindUpdate, map[string]any{"seq": i, "text": "a chunk of streamed agent text"}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		if i%10 == 9 {
			if err := j.Sync(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 2
			}
			fmt.Fprintf(out, "synced %d\n", i)
			out.Flush()
		}
	}
	io.Copy(io.Discard, os.Stdin)
	return 0
}
