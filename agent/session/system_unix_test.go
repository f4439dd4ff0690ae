//go:build unix

package session

import (
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
	"github.com/dshd/dshd/prompt"
)

// An AGENTS.md that cannot be used gives no section and is logged once,
// naming the file and what it is; the file made right is used.
func TestInstructionsCache_AFileThatCannotBeUsedIsLoggedOnce(t *testing.T) {
	cwd := t.TempDir()
	path := testkit.FIFO(t, cwd, prompt.ProjectInstructionsFile)
	var logs testkit.SyncBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	var c InstructionsCache
	testkit.Within(t, "the instructions of a FIFO", func() {
		for range 2 {
			if got := c.Get(cwd, log); got != "" {
				t.Fatalf("a FIFO gave the section %q", got)
			}
		}
	})
	if n := strings.Count(logs.String(), "project instructions not used"); n != 1 || !strings.Contains(logs.String(), path) ||
		!strings.Contains(logs.String(), "a named pipe (FIFO), not a regular file") {
		t.Fatalf("logged %d times, want once naming the file and what it is:\n%s", n, logs.String())
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	testkit.Write(t, cwd, prompt.ProjectInstructionsFile, "RULE")
	if got := c.Get(cwd, log); !strings.Contains(got, "RULE") {
		t.Fatalf("the regular file gave %q", got)
	}
}
