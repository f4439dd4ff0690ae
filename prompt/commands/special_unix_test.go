//go:build unix

package commands

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

// A repository's command directory may hold a FIFO or a link to a device
// (which leads outside the workspace), and the user's a link to one: each
// is a mistake naming the file, read without a wait and without reading
// the device, and the other commands load.
func TestLoad_AFIFOOrADeviceIsAMistakeNamingTheFile(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	dir := filepath.Join(ws, ".dshd", "commands")
	testkit.Write(t, dir, "fine.md", "Still here.\n")
	fifo, zero := testkit.FIFO(t, dir, "hang.md"), testkit.LinkToZero(t, dir, "zero.md")
	userZero := testkit.LinkToZero(t, filepath.Join(home, "dshd", "commands"), "zero.md")
	var cmds []Command
	var errs []*Error
	testkit.Within(t, "the commands of a directory with a FIFO and /dev/zero", func() {
		cmds, errs = Load(append(WorkspaceSources(ws), UserSources(home)...), Limits{})
	})
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, e.Error())
	}
	want := []string{
		fifo + ": a named pipe (FIFO), not a regular file",
		zero + ": leads outside the workspace " + ws,
		userZero + ": a character device, not a regular file",
	}
	if !slices.Equal(msgs, want) {
		t.Fatalf("mistakes:\n%s\nwant:\n%s", strings.Join(msgs, "\n"), strings.Join(want, "\n"))
	}
	if !slices.ContainsFunc(cmds, func(c Command) bool { return c.Name == "fine" && c.Body == "Still here." }) {
		t.Fatalf("the good command is missing: %+v", cmds)
	}
}

// Past the count, nothing is stat'ed nor read: a FIFO or a dangling link
// there is no mistake of its own, and the user's directory, counted
// apart, is read whatever the workspace holds.
func TestLoad_PastTheCountNoFileIsLookedAt(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	dir, claude := filepath.Join(ws, ".dshd", "commands"), filepath.Join(ws, ".claude", "commands")
	testkit.Write(t, dir, "a.md", "A\n")
	testkit.Write(t, dir, "b.md", "B\n")
	testkit.FIFO(t, dir, "c.md")
	if err := os.Symlink("nowhere", filepath.Join(dir, "d.md")); err != nil {
		t.Fatal(err)
	}
	testkit.Write(t, claude, "e.md", "E\n")
	testkit.Write(t, filepath.Join(home, "dshd", "commands"), "u.md", "U\n")
	var cmds []Command
	var errs []*Error
	testkit.Within(t, "the commands of a directory with a FIFO past the count", func() {
		cmds, errs = Load(append(WorkspaceSources(ws), UserSources(home)...), Limits{MaxFiles: 2})
	})
	var msgs, names []string
	for _, e := range errs {
		msgs = append(msgs, e.Error())
	}
	for _, c := range cmds[len(Builtins()):] {
		names = append(names, c.Name)
	}
	where := ": at most 2 are read from a workspace's .dshd/commands and .claude/commands together (MaxFiles)"
	want := []string{dir + ": 4 command files, the last 2 by name not read" + where, claude + ": 1 command file, not read" + where}
	if !slices.Equal(msgs, want) || !slices.Equal(names, []string{"a", "b", "u"}) {
		t.Fatalf("commands %v, mistakes:\n%s\nwant a, b, u and:\n%s", names, strings.Join(msgs, "\n"), strings.Join(want, "\n"))
	}
}
