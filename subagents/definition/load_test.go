package definition_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
	"github.com/dshd/dshd/subagents/definition"
)

func TestLoad_TheWorkspaceWinsAndDshdsFilesWinOverClaudeCodes(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	testkit.Write(t, filepath.Join(ws, ".dshd", "agents"), "reviewer.md", "---\ndescription: workspace dshd\n---\n")
	testkit.Write(t, filepath.Join(ws, ".claude", "agents"), "reviewer.md", "---\nname: reviewer\ndescription: workspace claude\n---\n")
	testkit.Write(t, filepath.Join(ws, ".claude", "agents"), "tester.md", "---\nname: tester\ndescription: workspace claude tester\n---\n")
	testkit.Write(t, filepath.Join(home, "dshd", "agents"), "tester.md", "---\ndescription: user tester\n---\n")
	testkit.Write(t, filepath.Join(home, "dshd", "agents"), "planner.md", "---\ndescription: user planner\n---\n")
	testkit.Write(t, filepath.Join(home, "dshd", "agents"), "notes.txt", "not a definition")
	defs, errs := definition.Load(append(definition.WorkspaceSources(ws), definition.UserSources(home)...))
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	got := map[string]string{}
	for _, d := range defs {
		got[d.Name()] = d.Binding.Description
	}
	want := map[string]string{"reviewer": "workspace dshd", "tester": "workspace claude tester", "planner": "user planner"}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

func TestLoad_TwoFilesOfOnePlaceWithOneNameAreAMistake(t *testing.T) {
	ws := t.TempDir()
	dir := filepath.Join(ws, ".dshd", "agents")
	testkit.Write(t, dir, "a.md", "---\nname: same\ndescription: first\n---\n")
	testkit.Write(t, dir, "b.md", "---\nname: same\ndescription: second\n---\n")
	defs, errs := definition.Load(definition.WorkspaceSources(ws))
	if len(defs) != 1 || defs[0].Binding.Description != "first" || len(errs) != 1 ||
		!strings.Contains(errs[0].Error(), filepath.Join(dir, "b.md")+":2:1: name: "+filepath.Join(dir, "a.md")+` already defines the agent "same"`) {
		t.Fatalf("defs %v errs %v", defs, errs)
	}
}
