package definition_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
	"github.com/dshd/dshd/subagents/definition"
)

// A workspace definition came with the repository: the schema file it
// names is read from the workspace only, however the path leads out
// (absolute, "..", a link); the user's definition may name any file.
func TestSchema_AWorkspaceDefinitionsSchemaFileIsInItsWorkspace(t *testing.T) {
	outside := t.TempDir()
	secret := testkit.Write(t, outside, "config.json", `{"auths": {"registry": {"auth": "SECRET"}}}`)
	for _, tc := range []struct{ name, path string }{
		{"an absolute path", secret},
		{"a path up and out", "../../../" + filepath.Base(outside) + "/config.json"},
		{"a link in the workspace", "link.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A sibling of outside, so that "../../../" leads there.
			ws := filepath.Join(filepath.Dir(outside), "ws-"+strings.ReplaceAll(tc.name, " ", "-"))
			testkit.Write(t, ws, ".dshd/agents/README", "")
			if err := os.Symlink(secret, filepath.Join(ws, ".dshd", "agents", "link.json")); err != nil {
				t.Fatal(err)
			}
			text := "---\ndescription: d\noutputSchema: " + tc.path + "\n---\n"
			d, err := loadOne(t, ws, definition.ScopeWorkspace, "x.md", text)
			if err == nil {
				t.Fatalf("accepted, with the schema %s", d.Binding.OutputSchema)
			}
			msg := err.Error()
			if err.Key != "outputSchema" || err.Line != 3 || !strings.Contains(msg, "is outside the workspace") ||
				!strings.Contains(msg, "$XDG_CONFIG_HOME/dshd/agents") || strings.Contains(msg, "SECRET") {
				t.Fatalf("the refusal says %q (key %q, line %d)", msg, err.Key, err.Line)
			}
		})
	}
	t.Run("the user's definition", func(t *testing.T) {
		d, err := loadOne(t, t.TempDir(), definition.ScopeUser, "x.md", "---\ndescription: d\noutputSchema: "+secret+"\n---\n")
		if err != nil || !strings.Contains(string(d.Binding.OutputSchema), "SECRET") {
			t.Fatalf("the user's definition: %v", err)
		}
	})
	t.Run("a file in the workspace", func(t *testing.T) {
		ws := t.TempDir()
		testkit.Write(t, ws, "schemas/answer.json", `{"type": "object"}`)
		for _, path := range []string{"../../schemas/answer.json", filepath.Join(ws, "schemas", "answer.json")} {
			d, err := loadOne(t, ws, definition.ScopeWorkspace, "x.md", "---\ndescription: d\noutputSchema: "+path+"\n---\n")
			if err != nil || string(d.Binding.OutputSchema) != `{"type": "object"}` {
				t.Fatalf("%s: %v", path, err)
			}
		}
	})
}

// The schema file a definition names is watched as the definition is: an
// edit, a removal, a return is seen at the next refresh.
func TestSchema_AChangeOfTheSchemaFileIsSeenAtTheNextRefresh(t *testing.T) {
	d := newDaemon(t)
	ws := t.TempDir()
	dir := filepath.Join(ws, ".dshd", "agents")
	testkit.Write(t, dir, "x.md", "---\ndescription: d\noutputSchema: answer.json\n---\n")
	schema := testkit.Write(t, dir, "answer.json", `{"title": "A"}`)
	lib := definition.New(definition.Options{Service: d.svc, Base: d.base})
	w, errs := lib.Open(ws)
	defer w.Close()
	schemaIs := func(when, want string) {
		t.Helper()
		defs := w.Definitions()
		if len(defs) != 1 || string(defs[0].Binding.OutputSchema) != want {
			t.Fatalf("%s: the definitions %v", when, defs)
		}
	}
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	schemaIs("at first", `{"title": "A"}`)

	testkit.Write(t, dir, "answer.json", `{"title": "Bee"}`)
	if changed, errs := w.Refresh(); !changed || len(errs) != 0 {
		t.Fatalf("an edit of the schema: changed %v, errs %v", changed, errs)
	}
	schemaIs("after an edit", `{"title": "Bee"}`)

	// The same size, and the modification time it had.
	info, err := os.Stat(schema)
	if err != nil {
		t.Fatal(err)
	}
	testkit.Write(t, dir, "answer.json", `{"title": "Cee"}`)
	if err := os.Chtimes(schema, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
	if changed, _ := w.Refresh(); !changed {
		t.Fatal("an edit within one clock tick was not seen")
	}
	schemaIs("after an edit within one tick", `{"title": "Cee"}`)

	if err := os.Remove(schema); err != nil {
		t.Fatal(err)
	}
	if _, errs := w.Refresh(); len(errs) != 1 || errs[0].Key != "outputSchema" || !strings.Contains(errs[0].Error(), "answer.json") {
		t.Fatalf("a removed schema: errs %v", errs)
	}
	testkit.Write(t, dir, "answer.json", `{"title": "Dee"}`)
	if changed, errs := w.Refresh(); !changed || len(errs) != 0 {
		t.Fatalf("the schema back: changed %v, errs %v", changed, errs)
	}
	schemaIs("with the schema back", `{"title": "Dee"}`)
}

// MaxFileBytes bounds a definition and the schema file it names: a file of
// the bound's size is used, one byte more is a mistake naming the file
// and the setting, and the default bound takes both.
func TestMaxFileBytes_ADefinitionOrASchemaOverTheBoundIsAMistakeNamingTheSetting(t *testing.T) {
	d := newDaemon(t)
	ws := t.TempDir()
	dir := filepath.Join(ws, ".dshd", "agents")
	head := "---\ndescription: Fits.\n---\n"
	testkit.Write(t, dir, "fits.md", head+strings.Repeat("x", 200-len(head)))
	over := testkit.Write(t, dir, "over.md", head+strings.Repeat("x", 201-len(head)))
	testkit.Write(t, dir, "typed.md", "---\ndescription: Typed.\noutputSchema: answer.json\n---\n")
	schema := testkit.Write(t, dir, "answer.json", `{"title": "`+strings.Repeat("a", 201-len(`{"title": ""}`))+`"}`)
	lib := definition.New(definition.Options{Service: d.svc, Base: d.base, MaxFileBytes: 200, Settings: definition.Settings{MaxFileBytes: "--max-agent-file-bytes"}})
	w, errs := lib.Open(ws)
	defer w.Close()
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	want := []string{
		over + ": 201 bytes; a definition may have at most 200 (--max-agent-file-bytes)",
		filepath.Join(dir, "typed.md") + ":3:1: outputSchema: " + schema + ": 201 bytes; an output schema file may have at most 200 (--max-agent-file-bytes)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the mistakes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if names := defNames(w); names != "fits" {
		t.Fatalf("definitions = %s", names)
	}
	lib = definition.New(definition.Options{Service: d.svc, Base: d.base})
	w2, errs := lib.Open(ws)
	defer w2.Close()
	if names := defNames(w2); len(errs) != 0 || names != "fits,over,typed" {
		t.Fatalf("within the default bound: definitions %s, mistakes %v", names, errs)
	}
}
