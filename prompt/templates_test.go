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
		got, err := ProjectInstructions(t.TempDir(), InstructionsLimits{})
		if err != nil || got != (Instructions{}) {
			t.Fatalf("got %q, %v", got, err)
		}
	})
	t.Run("AGENTS.md is returned as a section naming the file", func(t *testing.T) {
		dir := t.TempDir()
		testkit.Write(t, dir, "AGENTS.md", "Run `make test`.\nUse {{tabs}}.\n")
		got, err := ProjectInstructions(dir, InstructionsLimits{})
		if err != nil || got.Cut != "" {
			t.Fatal(got.Cut, err)
		}
		for _, s := range []string{"# Project instructions", filepath.Join(dir, "AGENTS.md"), "Run `make test`.\nUse {{tabs}}.\n"} {
			if !strings.Contains(got.Section, s) {
				t.Errorf("section %q does not contain %q", got, s)
			}
		}
	})
	t.Run("a blank AGENTS.md gives nothing", func(t *testing.T) {
		dir := t.TempDir()
		testkit.Write(t, dir, "AGENTS.md", " \n\n")
		if got, err := ProjectInstructions(dir, InstructionsLimits{}); err != nil || got != (Instructions{}) {
			t.Fatalf("got %q, %v", got, err)
		}
	})
	t.Run("a directory named AGENTS.md is ignored", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, "AGENTS.md"), 0o755); err != nil {
			t.Fatal(err)
		}
		if got, err := ProjectInstructions(dir, InstructionsLimits{}); err != nil || got != (Instructions{}) {
			t.Fatalf("got %q, %v", got, err)
		}
	})
	t.Run("a symlink leading outside cwd is not read", func(t *testing.T) {
		dir, outside := t.TempDir(), t.TempDir()
		testkit.Write(t, outside, "secret", "SECRET")
		if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "AGENTS.md")); err != nil {
			t.Fatal(err)
		}
		want := "prompt: project instructions " + filepath.Join(dir, "AGENTS.md") + ": leads outside the workspace " + dir
		if got, err := ProjectInstructions(dir, InstructionsLimits{}); err == nil || got != (Instructions{}) || err.Error() != want {
			t.Fatalf("got %q, %v; want nothing of the file and the error %q", got, err, want)
		}
	})
	t.Run("a symlink to a file below cwd is read, an absolute one too", func(t *testing.T) {
		for _, target := range []string{"rules.md", "ABS"} {
			dir := t.TempDir()
			rules := testkit.Write(t, dir, "rules.md", "Be brief.")
			if target == "ABS" {
				target = rules
			}
			if err := os.Symlink(target, filepath.Join(dir, "AGENTS.md")); err != nil {
				t.Fatal(err)
			}
			if got, err := ProjectInstructions(dir, InstructionsLimits{}); err != nil || !strings.Contains(got.Section, "Be brief.") {
				t.Fatalf("a link to %s: got %q, %v", target, got, err)
			}
		}
	})
	t.Run("a missing cwd gives nothing", func(t *testing.T) {
		if got, err := ProjectInstructions(filepath.Join(t.TempDir(), "gone"), InstructionsLimits{}); err != nil || got != (Instructions{}) {
			t.Fatalf("got %q, %v", got, err)
		}
	})
	t.Run("a huge AGENTS.md is cut at the default bound on a character boundary", func(t *testing.T) {
		dir := t.TempDir()
		testkit.Write(t, dir, "AGENTS.md", "a"+strings.Repeat("é", DefaultMaxInstructionsBytes))
		got, err := ProjectInstructions(dir, InstructionsLimits{})
		if err != nil {
			t.Fatal(err)
		}
		// The rune after the first byte is cut whole: 1+2*32767 bytes are kept.
		if !strings.Contains(got.Section, "[AGENTS.md was cut after 65535 bytes; read the file for the rest.]") {
			t.Errorf("the cut is not said to the model: %q", got.Section[len(got.Section)-200:])
		}
		if want := "it is 131073 bytes, over MaxBytes (65536); the model is given its first 65535 bytes and told the rest is in the file"; got.Cut != want {
			t.Errorf("the cut is said as %q, want %q", got.Cut, want)
		}
		if strings.Contains(got.Section, "\uFFFD") {
			t.Errorf("the cut split a character")
		}
		if len(got.Section) > DefaultMaxInstructionsBytes+1024 {
			t.Errorf("section is %d bytes", len(got.Section))
		}
	})
	t.Run("the bound is the limits', and its setting is named", func(t *testing.T) {
		dir := t.TempDir()
		limits := InstructionsLimits{MaxBytes: 100, Settings: InstructionsSettings{MaxBytes: "--max-instructions-bytes"}}
		testkit.Write(t, dir, "AGENTS.md", strings.Repeat("r", 99)+"!")
		if got, err := ProjectInstructions(dir, limits); err != nil || got.Cut != "" || !strings.Contains(got.Section, strings.Repeat("r", 99)+"!\n") {
			t.Fatalf("a file of the bound's size: %+v, %v", got, err)
		}
		testkit.Write(t, dir, "AGENTS.md", strings.Repeat("r", 100)+"TAIL")
		got, err := ProjectInstructions(dir, limits)
		if err != nil || strings.Contains(got.Section, "TAIL") || !strings.Contains(got.Section, "[AGENTS.md was cut after 100 bytes; read the file for the rest.]") ||
			got.Cut != "it is 104 bytes, over --max-instructions-bytes (100); the model is given its first 100 bytes and told the rest is in the file" {
			t.Fatalf("a file over the bound: %+v, %v", got, err)
		}
	})
}
