package workspace

import (
	"path/filepath"
	"testing"
)

func TestIsControl(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	tests := []struct {
		path string
		want bool
	}{
		{"proj/.git/config", true},
		{"proj/.git/hooks/pre-commit", true},
		{"proj/.git/info/exclude", true},
		{"proj/.git", true}, // a worktree's .git file
		{"proj/sub/module/.git/config", true},
		{"proj/.GIT/config", true},
		{"proj/.dshd/settings.json", true},
		{".config/dshd/config.json", true}, // XDG_CONFIG_HOME unset: ~/.config
		{"state/dshd/sessions/x.jsonl", true},
		{".local/state/dshd/x", false}, // XDG_STATE_HOME is set elsewhere
		{"proj/.gitignore", false},
		{"proj/.github/workflows/ci.yml", false},
		{"proj/src/git/config.go", false},
		{"proj/dshd/main.go", false},
	}
	for _, tc := range tests {
		p := filepath.Join(home, filepath.FromSlash(tc.path))
		if got := IsControl(p); got != tc.want {
			t.Errorf("IsControl(~/%s) = %v, want %v", tc.path, got, tc.want)
		}
	}
}
