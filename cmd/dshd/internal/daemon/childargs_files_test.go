package daemon

import (
	"testing"

	"github.com/spf13/pflag"

	"github.com/dshd/dshd/cmd/dshd/internal/config"
)

// settingsOf loads a daemon's settings from args and nothing else.
func settingsOf(t *testing.T, args []string) *config.Settings {
	t.Helper()
	fs := pflag.NewFlagSet("dshd", pflag.ContinueOnError)
	config.AddFlags(fs, config.Serve)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("the arguments %q: %v", args, err)
	}
	st, err := config.Load(fs, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("the settings from %q: %v", args, err)
	}
	return st
}

// TestAChildDshdGetsTheParentsWorkspaceFileBounds: the arguments of the
// default child dshd carry the parent's bounds on the files of a
// workspace it reads itself (their sizes and how many), set or default,
// and the child's settings read them back.
func TestAChildDshdGetsTheParentsWorkspaceFileBounds(t *testing.T) {
	for _, parentArgs := range [][]string{
		{"--max-instructions-bytes", "2048", "--max-command-file-bytes", "3072", "--max-agent-file-bytes", "4096", "--max-ignore-file-bytes", "5120",
			"--max-command-files", "7", "--max-agent-files", "3"},
		nil,
	} {
		parent := settingsOf(t, parentArgs)
		args := childArgs(parent)
		child := settingsOf(t, args[1:])
		got := [6]int{child.MaxInstructionsBytes, child.MaxCommandFileBytes, child.MaxAgentFileBytes, child.MaxIgnoreFileBytes, child.MaxCommandFiles, child.MaxAgentFiles}
		want := [6]int{parent.MaxInstructionsBytes, parent.MaxCommandFileBytes, parent.MaxAgentFileBytes, parent.MaxIgnoreFileBytes, parent.MaxCommandFiles, parent.MaxAgentFiles}
		if got != want || (parentArgs != nil && want != [6]int{2048, 3072, 4096, 5120, 7, 3}) {
			t.Fatalf("the child of a parent with %v has %v (arguments %q)", want, got, args)
		}
	}
}
