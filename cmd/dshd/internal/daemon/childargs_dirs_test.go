package daemon

import (
	"testing"

	"github.com/spf13/pflag"

	"github.com/dshd/dshd/cmd/dshd/internal/config"
)

// TestAChildDshdTakesAsManyAdditionalDirectoriesAsItsParent: a session
// gives its child dshd its additional directories, so the child's
// --max-additional-directories is the parent's; unset (dshd prompt), the
// child keeps its default.
func TestAChildDshdTakesAsManyAdditionalDirectoriesAsItsParent(t *testing.T) {
	for _, tc := range []struct{ parent, want int }{{200, 200}, {0, 64}} {
		parent := &config.Settings{LogLevel: "info", LogFormat: "text", Sandbox: "off", SandboxFallback: "refuse", MCPSandbox: "off",
			MaxAdditionalDirectories: tc.parent}
		args := childArgs(parent)
		fs := pflag.NewFlagSet("dshd", pflag.ContinueOnError)
		config.AddFlags(fs, config.Serve)
		if err := fs.Parse(args[1:]); err != nil {
			t.Fatalf("the child's arguments %q: %v", args, err)
		}
		child, err := config.Load(fs, func(string) (string, bool) { return "", false })
		if err != nil {
			t.Fatalf("the child's settings from %q: %v", args, err)
		}
		if child.MaxAdditionalDirectories != tc.want {
			t.Fatalf("the child of a parent taking %d additional directories takes %d, want %d (arguments %q)", tc.parent, child.MaxAdditionalDirectories, tc.want, args)
		}
	}
}
