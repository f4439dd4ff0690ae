package daemon

import (
	"testing"

	"github.com/spf13/pflag"

	"github.com/dshd/dshd/cmd/dshd/internal/config"
)

// TestAChildDshdGetsTheParentsDiskBounds: the arguments of the default
// child dshd carry the parent's --max-journal-bytes and
// --min-free-disk-bytes and --max-state-bytes, and the child's settings read them back (0, off,
// included: a child keeps no bound its parent turned off).
func TestAChildDshdGetsTheParentsDiskBounds(t *testing.T) {
	for _, tc := range []struct{ journal, free, state int }{{4096, 1 << 30, 768 << 20}, {0, 0, 0}} {
		parent := &config.Settings{LogLevel: "info", LogFormat: "text", Sandbox: "off", SandboxFallback: "refuse", MCPSandbox: "off",
			MaxJournalBytes: tc.journal, MinFreeDiskBytes: tc.free, MaxStateBytes: tc.state}
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
		if child.MaxJournalBytes != tc.journal || child.MinFreeDiskBytes != tc.free || child.MaxStateBytes != tc.state {
			t.Fatalf("the child of a parent with bounds %d, %d and %d has %d, %d and %d (arguments %q)", tc.journal, tc.free, tc.state, child.MaxJournalBytes, child.MinFreeDiskBytes, child.MaxStateBytes, args)
		}
	}
}
