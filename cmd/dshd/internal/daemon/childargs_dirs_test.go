package daemon

import (
	"testing"

	"github.com/dshd/dshd/cmd/dshd/internal/config"
)

// TestAChildDshdTakesAsManyAdditionalDirectoriesAsItsParent: a session
// gives its child dshd its additional directories, so the child's
// --max-additional-directories is the parent's, set or default; unset
// (dshd prompt, which has no such setting), the child keeps its default.
func TestAChildDshdTakesAsManyAdditionalDirectoriesAsItsParent(t *testing.T) {
	for _, tc := range []struct {
		parent *config.Settings
		want   int
	}{
		{settingsOf(t, []string{"--max-additional-directories", "200"}), 200},
		{settingsOf(t, nil), 64},
		{&config.Settings{LogLevel: "info", LogFormat: "text", Sandbox: "off", SandboxFallback: "refuse", MCPSandbox: "off"}, 64},
	} {
		args := childArgs(tc.parent)
		if got := settingsOf(t, args[1:]).MaxAdditionalDirectories; got != tc.want {
			t.Fatalf("the child of a parent taking %d additional directories takes %d, want %d (arguments %q)", tc.parent.MaxAdditionalDirectories, got, tc.want, args)
		}
	}
}
