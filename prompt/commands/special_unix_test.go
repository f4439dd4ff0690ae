//go:build unix

package commands

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

// A repository's command directory may hold a FIFO or a link to a device:
// each is a mistake naming the file, read without a wait and without
// reading the device, and the other commands load.
func TestLoad_AFIFOOrADeviceIsAMistakeNamingTheFile(t *testing.T) {
	ws := t.TempDir()
	dir := filepath.Join(ws, ".dshd", "commands")
	testkit.Write(t, dir, "fine.md", "Still here.\n")
	fifo, zero := testkit.FIFO(t, dir, "hang.md"), testkit.LinkToZero(t, dir, "zero.md")
	var cmds []Command
	var errs []*Error
	testkit.Within(t, "the commands of a directory with a FIFO and /dev/zero", func() {
		cmds, errs = Load(WorkspaceSources(ws), Limits{})
	})
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, e.Error())
	}
	want := []string{
		fifo + ": a named pipe (FIFO), not a regular file",
		zero + ": a character device, not a regular file",
	}
	if !slices.Equal(msgs, want) {
		t.Fatalf("mistakes:\n%s\nwant:\n%s", strings.Join(msgs, "\n"), strings.Join(want, "\n"))
	}
	if !slices.ContainsFunc(cmds, func(c Command) bool { return c.Name == "fine" && c.Body == "Still here." }) {
		t.Fatalf("the good command is missing: %+v", cmds)
	}
}
