// This file is the test binary's life as a small stdio MCP server whose
// one tool writes a file, for the tests of MCP servers under the sandbox.

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dshd/dshd/internal/testkit"
)

// asMCPWriter, when set in the environment, makes the test binary a stdio
// MCP server with one tool, write, that writes the file it is given; set
// to "sleep", the server first starts a `sleep 300` of its own (for
// "fail", see mcpWriter).
const asMCPWriter = "DSHD_E2E_MCP_WRITER"

// mcpWriter runs the writer server until its stdin closes; as "fail" it
// writes the file its last argument names instead and, when it cannot,
// says why on stderr and exits 1.
func mcpWriter() int {
	if os.Getenv(asMCPWriter) == "fail" {
		if err := os.WriteFile(os.Args[len(os.Args)-1], []byte("state"), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	if os.Getenv(asMCPWriter) == "sleep" {
		if err := exec.Command("sleep", "300").Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "writer", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{
		Name: "write", Description: "Writes a file.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}},
	}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var in struct{ Path string }
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return nil, err
		}
		text, isErr := "wrote "+in.Path, false
		if err := os.WriteFile(in.Path, []byte("written by the MCP server"), 0o644); err != nil {
			text, isErr = err.Error(), true
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}, IsError: isErr}, nil
	})
	if err := srv.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		return 1
	}
	return 0
}

// writerEntry is the mcpServers entry of the writer server.
func writerEntry(t *testing.T, mode string) map[string]any {
	t.Helper()
	exe := testkit.Executable(t)
	return map[string]any{"name": "writer", "command": exe, "args": []any{}, "env": []any{
		map[string]any{"name": asMCPWriter, "value": mode},
		// A race-enabled server otherwise sleeps a second at exit.
		map[string]any{"name": "GORACE", "value": "atexit_sleep_ms=0"},
	}}
}
