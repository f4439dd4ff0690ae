//go:build unix

package definition_test

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dshd/dshd/internal/testkit"
	"github.com/dshd/dshd/subagents/definition"
)

// Past --max-agent-files, by name from .dshd/agents on, no definition
// file is stat'ed nor read (a FIFO or a dangling link there is no mistake
// of its own), each directory over is a mistake naming the setting, the
// user's directory has a count of its own (its hit logged once, not shown
// to a session), and a file added past the count, which moves no stamp,
// is still counted at the next refresh.
func TestLibrary_PastTheCountNoDefinitionIsLookedAt(t *testing.T) {
	d := newDaemon(t)
	ws, home := t.TempDir(), t.TempDir()
	dir, claude, udir := filepath.Join(ws, ".dshd", "agents"), filepath.Join(ws, ".claude", "agents"), filepath.Join(home, "dshd", "agents")
	def := func(dir, name string) { testkit.Write(t, dir, name+".md", "---\ndescription: Agent "+name+".\n---\n") }
	def(dir, "a")
	def(dir, "b")
	testkit.FIFO(t, dir, "c.md")
	if err := os.Symlink("nowhere", filepath.Join(dir, "d.md")); err != nil {
		t.Fatal(err)
	}
	def(claude, "e")
	for _, name := range []string{"u1", "u2", "u3"} {
		def(udir, name)
	}
	// Old enough to be trusted: an unchanged stamp then means no change.
	old := time.Now().Add(-time.Hour)
	for _, d := range []string{dir, claude, udir} {
		for _, name := range []string{"a", "b", "e", "u1", "u2", "u3"} {
			os.Chtimes(filepath.Join(d, name+".md"), old, old) // each where it is
		}
	}
	var logs testkit.SyncBuffer
	lib := definition.New(definition.Options{Service: d.svc, Base: d.base, User: definition.UserSources(home),
		MaxFiles: 2, Settings: definition.Settings{MaxFiles: "--max-agent-files"}, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	userHit := udir + ": 3 agent definitions, the last 1 by name not read: at most 2 are read from the user's directory (--max-agent-files)"
	if errs := lib.CheckUser(); len(errs) != 1 || errs[0].Error() != userHit {
		t.Fatalf("CheckUser = %v", errs)
	}
	var w *definition.Workspace
	var errs []*definition.Error
	testkit.Within(t, "the definitions of a directory with a FIFO past the count", func() { w, errs = lib.Open(ws) })
	defer w.Close()
	where := ": at most 2 are read from a workspace's .dshd/agents and .claude/agents together (--max-agent-files)"
	mistakes := func(errs []*definition.Error) []string {
		var out []string
		for _, e := range errs {
			out = append(out, e.Error())
		}
		return out
	}
	want := []string{dir + ": 4 agent definitions, the last 2 by name not read" + where, claude + ": 1 agent definition, not read" + where}
	if got := mistakes(errs); !slices.Equal(got, want) || defNames(w) != "a,b,u1,u2" {
		t.Fatalf("definitions %s, mistakes:\n%s\nwant a,b,u1,u2 and:\n%s", defNames(w), strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	def(dir, "f") // past the count: no stamp moves
	want[0] = fmt.Sprintf("%s: 5 agent definitions, the last 3 by name not read%s", dir, where)
	if _, errs := w.Refresh(); !slices.Equal(mistakes(errs), want) || defNames(w) != "a,b,u1,u2" {
		t.Fatalf("after f.md was added past the count: definitions %s, mistakes:\n%s", defNames(w), strings.Join(mistakes(errs), "\n"))
	}
	if n := strings.Count(logs.String(), "--max-agent-files"); n != 1 || !strings.Contains(logs.String(), "agent definition rejected") {
		t.Fatalf("the user's hit was logged %d times, want once:\n%s", n, logs.String())
	}
}
