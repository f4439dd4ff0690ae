//go:build unix

package session

import (
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/dshd/dshd/agent/llm/scripted"
	"github.com/dshd/dshd/internal/testkit"
	"github.com/dshd/dshd/prompt"
)

// instructionsSession is a session in cwd whose logs go to logs.
func instructionsSession(t *testing.T, cwd string, logs *testkit.SyncBuffer, limits prompt.InstructionsLimits) *Session {
	t.Helper()
	s, err := New(t.Context(), Config{ID: "s1", Cwd: cwd, Model: scripted.Default(), Instructions: limits, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// An AGENTS.md that cannot be used gives no section, is logged once and
// told to the user once, naming the file and what it is; the file made
// right is used, and nothing is told of it.
func TestInstructions_AFileThatCannotBeUsedIsLoggedAndToldOnce(t *testing.T) {
	cwd := t.TempDir()
	path := testkit.FIFO(t, cwd, prompt.ProjectInstructionsFile)
	var logs testkit.SyncBuffer
	s := instructionsSession(t, cwd, &logs, prompt.InstructionsLimits{})
	testkit.Within(t, "the instructions of a FIFO", func() {
		w, ok := s.InstructionsWarning()
		if want := (InstructionsWarning{Title: path + " is not used", Detail: "a named pipe (FIFO), not a regular file"}); !ok || w != want {
			t.Fatalf("the user is told %+v, %v; want %+v", w, ok, want)
		}
		for range 2 {
			if got := s.ProjectInstructions(); got != "" {
				t.Fatalf("a FIFO gave the section %q", got)
			}
			if w, ok := s.InstructionsWarning(); ok {
				t.Fatalf("the same file was told again: %+v", w)
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
	if got := s.ProjectInstructions(); !strings.Contains(got, "RULE") {
		t.Fatalf("the regular file gave %q", got)
	}
	if w, ok := s.InstructionsWarning(); ok {
		t.Fatalf("a file that is used was told: %+v", w)
	}
}
