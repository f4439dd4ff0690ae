//go:build unix

package prompt

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

// An AGENTS.md that is a FIFO (swapped in after the cache's stat) or a
// link to a device is an error saying what it is, found without a wait
// and without reading the device.
func TestProjectInstructions_AFIFOOrADeviceIsAnErrorAtOnce(t *testing.T) {
	fifoDir, zeroDir := t.TempDir(), t.TempDir()
	testkit.FIFO(t, fifoDir, "AGENTS.md")
	// A link to /dev/zero leads outside the cwd; one to a device below
	// it cannot be made without privileges, so the root refuses this one
	// before it is opened, saying so as for any file a workspace holds.
	testkit.LinkToZero(t, zeroDir, "AGENTS.md")
	for dir, want := range map[string]string{fifoDir: "a named pipe (FIFO), not a regular file", zeroDir: "leads outside the workspace " + zeroDir} {
		testkit.Within(t, "the instructions of "+dir, func() {
			got, err := ProjectInstructions(dir, InstructionsLimits{})
			if err == nil || got != (Instructions{}) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), filepath.Join(dir, "AGENTS.md")) {
				t.Errorf("ProjectInstructions = %q, %v; want an error naming the file and saying %q", got, err, want)
			}
		})
	}
}
