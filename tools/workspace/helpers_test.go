package workspace

import (
	"testing"

	"github.com/dshd/dshd/tools/internal/tooltest"
)

// mustNew returns the workspace of dir, failing the test on an error.
func mustNew(t testing.TB, dir string, additional ...string) *Workspace {
	t.Helper()
	ws, err := New(dir, additional)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

// write and read are tooltest's.
var (
	write = tooltest.Write
	read  = tooltest.Read
)
