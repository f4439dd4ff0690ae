//go:build unix

package definition_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
	"github.com/dshd/dshd/subagents/definition"
)

// A schema file that is a FIFO or a device is a mistake of the
// definition, found without a wait and without reading the device.
func TestSchema_AFIFOOrADeviceIsAMistakeOfTheDefinition(t *testing.T) {
	for _, tc := range []struct {
		name  string
		scope definition.Scope
		path  string
		want  string
	}{
		{"a FIFO in the workspace", definition.ScopeWorkspace, "fifo.json", "fifo.json: a named pipe (FIFO), not a regular file"},
		{"the zero device named by the workspace", definition.ScopeWorkspace, "/dev/zero", "/dev/zero is outside the workspace"},
		{"a FIFO of the user's", definition.ScopeUser, "fifo.json", "fifo.json: a named pipe (FIFO), not a regular file"},
		{"the zero device named by the user", definition.ScopeUser, "/dev/zero", "/dev/zero: a character device, not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			sources := definition.WorkspaceSources(dir)
			if tc.scope == definition.ScopeUser {
				sources = definition.UserSources(dir)
			}
			testkit.FIFO(t, sources[0].Dir, "fifo.json")
			var err *definition.Error
			testkit.Within(t, "a definition whose schema is "+tc.path, func() {
				_, err = loadOne(t, dir, tc.scope, "x.md", "---\ndescription: d\noutputSchema: "+tc.path+"\n---\n")
			})
			if err == nil || err.Key != "outputSchema" || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("the mistake is %v, want one of outputSchema saying %q", err, tc.want)
			}
		})
	}
}

// A definition file that is a FIFO or a link to a device (which, in a
// workspace, leads outside it) is a mistake naming it, not skipped in
// silence; the others load.
func TestLoad_AFIFOOrADeviceAsADefinitionIsAMistakeNamingIt(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	dir := filepath.Join(ws, ".dshd", "agents")
	testkit.Write(t, dir, "fine.md", "---\ndescription: d\n---\n")
	fifo, zero := testkit.FIFO(t, dir, "hang.md"), testkit.LinkToZero(t, dir, "zero.md")
	userZero := testkit.LinkToZero(t, filepath.Join(home, "dshd", "agents"), "zero.md")
	var defs []*definition.Definition
	var errs []*definition.Error
	testkit.Within(t, "the definitions of a directory with a FIFO and /dev/zero", func() {
		defs, errs = definition.Load(append(definition.WorkspaceSources(ws), definition.UserSources(home)...))
	})
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, e.Error())
	}
	want := []string{zero + ": leads outside the workspace " + ws, fifo + ": a named pipe (FIFO), not a regular file", userZero + ": a character device, not a regular file"}
	if !slices.Equal(msgs, want) || len(defs) != 1 || defs[0].Name() != "fine" {
		t.Fatalf("definitions %v, mistakes:\n%s\nwant:\n%s", defs, strings.Join(msgs, "\n"), strings.Join(want, "\n"))
	}
}
