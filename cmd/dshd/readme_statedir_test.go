// End-to-end test of a state dir dshd cannot use (README: --state-dir is
// "a directory"): every command that opens the store stops at start with
// exit 2 and one line naming the setting, where it came from and the path
// that failed, instead of exit 1 and "state dir: session: state
// directory: …".

package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

func TestAStateDirThatIsAFileStopsDshdAtStartNamingTheSetting(t *testing.T) {
	file := testkit.Write(t, t.TempDir(), "state", "not a directory\n")
	runMistakes(t, []mistake{
		{name: "prompt", args: []string{"prompt", "--state-dir", file, "hi"},
			want: []string{`--state-dir "` + file + `"`, "not a directory"}},
		{name: "serve on stdio from the environment", args: []string{"serve"}, env: []string{"DSHD_STATE_DIR=" + file},
			want: []string{`env DSHD_STATE_DIR "` + file + `"`, "not a directory"}},
		{name: "sessions list", args: []string{"sessions", "list", "--state-dir", file},
			want: []string{`--state-dir "` + file + `"`, "not a directory"}},
	})
}

// The sessions commands only read the state dir: one that does not exist
// (a mistyped --state-dir) is said and left uncreated, and lists nothing.
func TestTheSessionsCommandsSayAStateDirDoesNotExistAndDoNotCreateIt(t *testing.T) {
	typo := filepath.Join(t.TempDir(), "stat-dir")
	for _, c := range []struct {
		name   string
		args   []string
		code   int
		stdout string
	}{
		{name: "list", args: []string{"sessions", "list"}, stdout: "SESSION  LAST USED  CWD  TITLE\n"},
		{name: "list --json", args: []string{"sessions", "list", "--json"}, stdout: "[]\n"},
		{name: "show", args: []string{"sessions", "show", "s_1"}, code: 1},
		{name: "delete", args: []string{"sessions", "delete", "s_1"}, code: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runDshd(t, nil, append(c.args, "--state-dir", typo)...)
			if code != c.code || stdout != c.stdout {
				t.Errorf("exit %d, stdout %q; want exit %d, stdout %q", code, stdout, c.code, c.stdout)
			}
			if want := "no sessions in " + filepath.Join(typo, "sessions") + ": it does not exist"; !strings.Contains(stderr, want) {
				t.Errorf("stderr does not say %q:\n%s", want, stderr)
			}
			if _, err := os.Stat(typo); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the state dir was created (stat: %v)", err)
			}
		})
	}
}
