package commands

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

// A workspace's command files are read from inside it: a link to a file
// outside, or a command directory that is a link out, is a mistake naming
// it, and nothing of the file outside is read; a link that stays inside
// is followed, the other files load, and the user's own directory may
// link anywhere.
func TestLoad_AWorkspaceCommandFileThatLeadsOutsideIsAMistake(t *testing.T) {
	ws, home, outside := t.TempDir(), t.TempDir(), t.TempDir()
	secret := testkit.Write(t, outside, "secret.md", "SECRET-OUTSIDE\n")
	testkit.Write(t, outside, "commands/away.md", "SECRET-AWAY\n")
	dir := filepath.Join(ws, ".dshd", "commands")
	testkit.Write(t, dir, "fine.md", "Still here.\n")
	testkit.Write(t, ws, "docs/inside.md", "Linked from inside.\n")
	testkit.Symlink(t, dir, "inside.md", "../../docs/inside.md")
	leak := testkit.Symlink(t, dir, "leak.md", secret)
	up := testkit.Symlink(t, dir, "up.md", "../../../"+filepath.Base(outside)+"/secret.md")
	testkit.Symlink(t, ws, ".claude", outside)
	testkit.Symlink(t, home, "dshd/commands/mine.md", secret)

	for _, load := range []struct {
		name string
		get  func() ([]Command, []*Error)
	}{
		{"Load", func() ([]Command, []*Error) {
			return Load(append(WorkspaceSources(ws), UserSources(home)...), Limits{})
		}},
		{"a catalog, read again", func() ([]Command, []*Error) {
			c := NewCatalog(append(WorkspaceSources(ws), UserSources(home)...), Limits{})
			c.Refresh()
			return c.Commands(), c.Errors()
		}},
	} {
		cmds, errs := load.get()
		var msgs []string
		for _, e := range errs {
			msgs = append(msgs, e.Error())
		}
		out := ": leads outside the workspace " + ws
		want := []string{filepath.Join(ws, ".claude", "commands") + out, leak + out, up + out}
		if !slices.Equal(msgs, want) {
			t.Fatalf("%s: mistakes:\n%s\nwant:\n%s", load.name, strings.Join(msgs, "\n"), strings.Join(want, "\n"))
		}
		bodies := map[string]string{}
		for _, c := range cmds[len(Builtins()):] {
			bodies[c.Name] = c.Body
		}
		if len(bodies) != 3 || bodies["fine"] != "Still here." || bodies["inside"] != "Linked from inside." || bodies["mine"] != "SECRET-OUTSIDE" {
			t.Fatalf("%s: commands %q; want fine, inside and the user's mine", load.name, bodies)
		}
	}
}
