// This file tests the embedded templates, the standard variables and
// AGENTS.md loading.

package prompt

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dshd/dshd/internal/testkit"
)

func TestTemplates(t *testing.T) {
	now := time.Date(2026, 3, 2, 23, 30, 0, 0, time.UTC)
	tests := []struct {
		name     string
		template string
		vars     Vars
		wantVars []string
		contains []string
	}{
		{
			name:     "the system prompt uses the environment and names every tool",
			template: System,
			vars:     SystemVars("/home/dev/shop", "deepseek-chat", now),
			wantVars: []string{VarCwd, VarModel, VarDate, VarOS},
			contains: []string{"/home/dev/shop", "deepseek-chat", "2026-03-02", runtime.GOOS + "/" + runtime.GOARCH,
				"`read_file`", "`write_file`", "`edit_file`", "`list_dir`", "`glob`", "`grep`", "`run_command`", "`plan`", "`subagent`"},
		},
		{
			name:     "a subagent with fixed permissions is told to report limitations instead of retrying",
			template: Subagent,
			vars:     SubagentVars("/w", "m", now, true),
			wantVars: []string{VarCwd, VarModel, VarDate, VarOS, VarPermissions},
			contains: []string{"/w", "do not retry", "report the limitation", "self-contained"},
		},
		{
			name:     "a subagent with ask permissions is told not to retry a rejection",
			template: Subagent,
			vars:     SubagentVars("/w", "m", now, false),
			contains: []string{"user's approval", "do not retry"},
		},
		{
			name:     "the compaction prompt asks for a summary and needs no variables",
			template: Compaction,
			vars:     nil,
			wantVars: []string{},
			contains: []string{"summary", "Open items"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, err := Template(tt.template)
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantVars != nil {
				got, err := Variables(tmpl)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(sorted(got), sorted(tt.wantVars)) {
					t.Errorf("variables = %v, want %v", got, tt.wantVars)
				}
			}
			out, err := Render(tmpl, tt.vars)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tt.contains {
				if !strings.Contains(out, s) {
					t.Errorf("rendered %s does not contain %q", tt.template, s)
				}
			}
			if strings.Contains(out, "{{") {
				t.Errorf("rendered %s still contains {{", tt.template)
			}
		})
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func TestTemplateNames(t *testing.T) {
	if got, want := Templates(), []string{Compaction, Subagent, System}; !slices.Equal(got, want) {
		t.Errorf("Templates() = %v, want %v", got, want)
	}
	for _, name := range []string{"nope", "../templates/system", "templates/system", "system.md", ""} {
		if _, err := Template(name); !errors.Is(err, ErrUnknownTemplate) {
			t.Errorf("Template(%q) error = %v, want ErrUnknownTemplate", name, err)
		}
	}
}

func TestSystemVarsDateUsesTheGivenLocation(t *testing.T) {
	loc := time.FixedZone("east", 10*3600)
	now := time.Date(2026, 3, 2, 20, 0, 0, 0, time.UTC).In(loc) // 3 March there
	if got := SystemVars("/", "m", now)[VarDate]; got != "2026-03-03" {
		t.Errorf("date = %q, want 2026-03-03", got)
	}
}

func TestProjectInstructions(t *testing.T) {
	t.Run("a missing AGENTS.md gives nothing", func(t *testing.T) {
		got, err := ProjectInstructions(t.TempDir())
		if err != nil || got != "" {
			t.Fatalf("got %q, %v", got, err)
		}
	})
	t.Run("AGENTS.md is returned as a section naming the file", func(t *testing.T) {
		dir := t.TempDir()
		testkit.Write(t, dir, "AGENTS.md", "Run `make test`.\nUse {{tabs}}.\n")
		got, err := ProjectInstructions(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"# Project instructions", filepath.Join(dir, "AGENTS.md"), "Run `make test`.\nUse {{tabs}}.\n"} {
			if !strings.Contains(got, s) {
				t.Errorf("section %q does not contain %q", got, s)
			}
		}
	})
	t.Run("a blank AGENTS.md gives nothing", func(t *testing.T) {
		dir := t.TempDir()
		testkit.Write(t, dir, "AGENTS.md", " \n\n")
		if got, err := ProjectInstructions(dir); err != nil || got != "" {
			t.Fatalf("got %q, %v", got, err)
		}
	})
	t.Run("a directory named AGENTS.md is ignored", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, "AGENTS.md"), 0o755); err != nil {
			t.Fatal(err)
		}
		if got, err := ProjectInstructions(dir); err != nil || got != "" {
			t.Fatalf("got %q, %v", got, err)
		}
	})
	t.Run("a symlink leading outside cwd is not read", func(t *testing.T) {
		dir, outside := t.TempDir(), t.TempDir()
		testkit.Write(t, outside, "secret", "SECRET")
		if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "AGENTS.md")); err != nil {
			t.Fatal(err)
		}
		if got, err := ProjectInstructions(dir); err == nil || strings.Contains(got, "SECRET") {
			t.Fatalf("got %q, %v; want an error and nothing of the file", got, err)
		}
	})
	t.Run("a symlink to a file below cwd is read", func(t *testing.T) {
		dir := t.TempDir()
		testkit.Write(t, dir, "rules.md", "Be brief.")
		if err := os.Symlink("rules.md", filepath.Join(dir, "AGENTS.md")); err != nil {
			t.Fatal(err)
		}
		if got, err := ProjectInstructions(dir); err != nil || !strings.Contains(got, "Be brief.") {
			t.Fatalf("got %q, %v", got, err)
		}
	})
	t.Run("a missing cwd gives nothing", func(t *testing.T) {
		if got, err := ProjectInstructions(filepath.Join(t.TempDir(), "gone")); err != nil || got != "" {
			t.Fatalf("got %q, %v", got, err)
		}
	})
	t.Run("a huge AGENTS.md is cut at the cap on a character boundary", func(t *testing.T) {
		dir := t.TempDir()
		testkit.Write(t, dir, "AGENTS.md", "a"+strings.Repeat("é", MaxProjectInstructions))
		got, err := ProjectInstructions(dir)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(got, "was cut at 64 KiB") {
			t.Errorf("the cut is not said")
		}
		if strings.Contains(got, "\uFFFD") {
			t.Errorf("the cut split a character")
		}
		if len(got) > MaxProjectInstructions+1024 {
			t.Errorf("section is %d bytes", len(got))
		}
	})
}
