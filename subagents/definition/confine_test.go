package definition_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
	"github.com/dshd/dshd/subagents/definition"
)

// A workspace's definition files are read from inside it: a link to a
// file outside, or an agents directory that is a link out, is a mistake
// naming it, and nothing of the file outside is read; a link that stays
// inside is followed, the other files load, and the user's own directory
// may link anywhere.
func TestLoad_AWorkspaceDefinitionThatLeadsOutsideIsAMistake(t *testing.T) {
	ws, home, outside := t.TempDir(), t.TempDir(), t.TempDir()
	secret := testkit.Write(t, outside, "secret.md", "---\ndescription: SECRET-DESCRIPTION\n---\nSECRET-PROMPT\n")
	testkit.Write(t, outside, "agents/away.md", "---\ndescription: SECRET-AWAY\n---\n")
	dir := filepath.Join(ws, ".dshd", "agents")
	testkit.Write(t, dir, "fine.md", "---\ndescription: Fine.\n---\n")
	testkit.Write(t, ws, "docs/agent.md", "---\ndescription: Linked from inside.\n---\n")
	testkit.Symlink(t, dir, "inside.md", "../../docs/agent.md")
	leak := testkit.Symlink(t, dir, "leak.md", secret)
	testkit.Symlink(t, ws, ".claude", outside)
	testkit.Symlink(t, home, "dshd/agents/mine.md", secret)

	defs, errs := definition.Load(append(definition.WorkspaceSources(ws), definition.UserSources(home)...))
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, e.Error())
	}
	out := ": leads outside the workspace " + ws
	want := []string{leak + out, filepath.Join(ws, ".claude", "agents") + out}
	if !slices.Equal(msgs, want) {
		t.Fatalf("mistakes:\n%s\nwant:\n%s", strings.Join(msgs, "\n"), strings.Join(want, "\n"))
	}
	described := map[string]string{}
	for _, d := range defs {
		described[d.Name()] = d.Binding.Description
	}
	if len(described) != 3 || described["fine"] != "Fine." || described["inside"] != "Linked from inside." || described["mine"] != "SECRET-DESCRIPTION" {
		t.Fatalf("definitions %q; want fine, inside and the user's mine", described)
	}
}
