package commands

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestToolErrors_NameTheFileTheLineTheToolAndTheClosestKnownOne(t *testing.T) {
	ws := t.TempDir()
	dir := filepath.Join(ws, ".dshd", "commands")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, tools string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("---\nallowed-tools: "+tools+"\n---\nbody\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("good.md", "Read, Bash(git add:*), grep")
	write("typo.md", "[Raed, grpe, mcp__fs__read]")
	cat := NewCatalog(WorkspaceSources(ws), Limits{})
	if errs := cat.Errors(); len(errs) != 0 {
		t.Fatalf("mistakes at load: %v", errs)
	}
	good, _ := cat.Lookup("good")
	if want := []string{"read_file", "run_command", "grep"}; !slices.Equal(good.AllowedTools, want) {
		t.Errorf("good's tools %v, want %v", good.AllowedTools, want)
	}
	known := []string{"read_file", "grep", "run_command", "mcp__fs__read"}
	errs := cat.ToolErrors(known)
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	want := []string{
		filepath.Join(dir, "typo.md") + `:2:1: allowed-tools: there is no tool named "Raed" (the command runs with the other tools it names); did you mean "Read" (read_file)?`,
		filepath.Join(dir, "typo.md") + `:2:1: allowed-tools: there is no tool named "grpe" (the command runs with the other tools it names); did you mean "grep"?`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("ToolErrors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	typo, _ := cat.Lookup("typo")
	if want := []string{"Raed", "grpe", "mcp__fs__read"}; !slices.Equal(typo.AllowedTools, want) {
		t.Errorf("typo's filter %v, want the names as written (a mistake never widens it)", typo.AllowedTools)
	}
}
