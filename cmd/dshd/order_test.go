// End-to-end test of the order of one model message's tool calls (issue
// 11, item 11): a read the model issued after a write of the same file
// sees the write, even when the editor takes its time with the write.

package main

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshd/dshd/internal/testkit"
)

const writeThenReadScript = `{"rules": [
  {"user": "update", "step": 0, "toolCalls": [
    {"name": "write_file", "arguments": {"path": "a.txt", "content": "new\n"}},
    {"name": "read_file", "arguments": {"path": "a.txt"}}]},
  {"user": "update", "step": 1, "text": "read: {{tool}}"}
]}`

// slowWriter is an editor holding a.txt whose fs/write_text_file answers
// once the file is read again or after a grace, whichever comes first: a
// read that does not wait for the write lands while the write is held.
type slowWriter struct {
	mu      sync.Mutex
	content string
	reads   int
	reread  chan struct{}
}

// writeGrace bounds how long a write is held when no read comes; it only
// costs the passing run that time, a read out of order arrives at once.
const writeGrace = 500 * time.Millisecond

func (e *slowWriter) handle(m *msg) (any, *rpcErr) {
	var p struct{ Path, Content string }
	_ = json.Unmarshal(m.Params, &p)
	switch m.Method {
	case "fs/read_text_file":
		e.mu.Lock()
		defer e.mu.Unlock()
		e.reads++
		if e.reads == 2 {
			close(e.reread)
		}
		return map[string]any{"content": e.content}, nil
	case "fs/write_text_file":
		select {
		case <-e.reread:
		case <-time.After(writeGrace):
		}
		e.mu.Lock()
		e.content = p.Content
		e.mu.Unlock()
		return map[string]any{}, nil
	}
	return nil, notFound
}

func TestAReadAfterAWriteInOneMessageSeesTheWrite(t *testing.T) {
	ctx := testkit.Context(t)
	_, c := stdioDaemon(t, writeScript(t, writeThenReadScript), t.TempDir(), "--mode", "yolo")
	ed := &slowWriter{content: "old\n", reread: make(chan struct{})}
	c.handleRequests(ed.handle)
	c.initialize(ctx, fsCaps)
	cwd := t.TempDir()
	testkit.Write(t, cwd, "a.txt", "old\n")
	sid := c.newSession(ctx, cwd)
	c.endTurn(ctx, sid, "update a.txt")
	got := text(c.updates(sid))
	if !strings.Contains(got, "new") || strings.Contains(got, "old") {
		t.Fatalf("the read issued after the write saw %q, want the new content", got)
	}
}
