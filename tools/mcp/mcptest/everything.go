package mcptest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Everything returns node and the script of server-everything as absolute
// paths, for a test whose working directory reaches tools/mcp as mcpDir.
// It skips t when the server is not installed (a plain `go test`, without
// `make npm`) and fails it when node is not in PATH.
func Everything(t testing.TB, mcpDir string) (node, script string) {
	t.Helper()
	script, err := filepath.Abs(filepath.Join(mcpDir, "testdata/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(script); err != nil {
		t.Skipf("server-everything is not installed (run `make npm`): %v", err)
	}
	node, err = exec.LookPath("node")
	if err != nil {
		t.Fatalf("node_modules is installed but node is not in PATH: %v", err)
	}
	node, err = filepath.Abs(node)
	if err != nil {
		t.Fatal(err)
	}
	return node, script
}
