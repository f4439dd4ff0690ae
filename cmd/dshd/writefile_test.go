// End-to-end tests of write_file through an editor that offers fs/*: a new
// file is created whichever way the editor says a file is missing (issue
// 11, item 12), and the result reads as English (item 16).

package main

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

// createScript has the model write one.txt, then repeat the tool's answer.
const createScript = `{"rules": [
  {"user": "create", "step": 0, "toolCalls": [{"name": "write_file", "arguments": {"path": "one.txt", "content": "hello\n"}}]},
  {"user": "create", "step": 1, "text": "Tool said: {{tool}}"}
]}`

func TestWriteFileCreatesAFileWhateverErrorTheEditorGivesForAMissingOne(t *testing.T) {
	for _, tc := range []struct {
		name string
		read *rpcErr // the editor's answer to fs/read_text_file
	}{
		{"-32002 resource not found", &rpcErr{Code: -32002, Message: "Resource not found"}},
		{"-32603 with a not-found reason in data.details (TS SDK)", &rpcErr{Code: -32603, Message: "Internal error", Data: json.RawMessage(`{"details":"ENOENT: no such file or directory, open 'one.txt'"}`)}},
		{"-32603 with a not-found message", &rpcErr{Code: -32603, Message: "File not found: one.txt"}},
		{"-32603 with no reason, and no such file on disk", &rpcErr{Code: -32603, Message: "Internal error"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testkit.Context(t)
			_, c := stdioDaemon(t, writeScript(t, createScript), t.TempDir(), "--mode", "yolo")
			var mu sync.Mutex
			var written []string
			c.handleRequests(func(m *msg) (any, *rpcErr) {
				switch m.Method {
				case "fs/read_text_file":
					return nil, tc.read
				case "fs/write_text_file":
					var p struct {
						Path, Content string
					}
					_ = json.Unmarshal(m.Params, &p)
					mu.Lock()
					written = append(written, p.Content)
					mu.Unlock()
					return map[string]any{}, nil
				}
				return nil, notFound
			})
			c.initialize(ctx, fsCaps)
			sid := c.newSession(ctx, t.TempDir())
			c.endTurn(ctx, sid, "create it")
			mu.Lock()
			defer mu.Unlock()
			if len(written) != 1 || written[0] != "hello\n" {
				t.Fatalf("fs/write_text_file got %q, want the new file's content once; the model was told %q", written, text(c.updates(sid)))
			}
			if got := text(c.updates(sid)); !strings.Contains(got, "Created one.txt (1 line, 6 bytes)") {
				t.Fatalf("the model was told %q, want \"Created one.txt (1 line, 6 bytes)\"", got)
			}
		})
	}
}

// TestWriteFileKeepsTheEditorsErrorForAFileThatExists: a failed read of a
// file that is on the disk is not taken for a missing file, so write_file
// never replaces a file it could not read.
func TestWriteFileKeepsTheEditorsErrorForAFileThatExists(t *testing.T) {
	ctx := testkit.Context(t)
	_, c := stdioDaemon(t, writeScript(t, createScript), t.TempDir(), "--mode", "yolo")
	var mu sync.Mutex
	writes := 0
	c.handleRequests(func(m *msg) (any, *rpcErr) {
		switch m.Method {
		case "fs/read_text_file":
			return nil, &rpcErr{Code: -32603, Message: "Internal error", Data: json.RawMessage(`{"details":"EACCES: permission denied"}`)}
		case "fs/write_text_file":
			mu.Lock()
			writes++
			mu.Unlock()
			return map[string]any{}, nil
		}
		return nil, notFound
	})
	c.initialize(ctx, fsCaps)
	cwd := t.TempDir()
	testkit.Write(t, cwd, "one.txt", "old\n")
	sid := c.newSession(ctx, cwd)
	c.endTurn(ctx, sid, "create it")
	mu.Lock()
	defer mu.Unlock()
	if writes != 0 {
		t.Fatalf("%d writes of a file the editor could not read", writes)
	}
	if got := text(c.updates(sid)); !strings.Contains(got, "permission denied") {
		t.Fatalf("the model was told %q, want the editor's reason", got)
	}
}
