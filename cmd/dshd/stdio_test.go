// End-to-end tests of dshd on stdio: the handshake, a streamed turn, and
// stdout purity.

package main

import (
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

func TestStdioHandshakeNewPromptStreamsChunksThenStopReason(t *testing.T) {
	ctx := testkit.Context(t)
	script := writeScript(t, `{"rules": [{"text": "Hello from the scripted model, in pieces.", "chunk": 5}]}`)
	p := start(t, opts{}, "--model", "scripted:"+script, "--state-dir", t.TempDir())
	c := stdioWire(p)

	init := c.initialize(ctx, nil)
	if init.ProtocolVersion != 1 || init.AgentInfo.Name != "dshd" {
		t.Fatalf("initialize: %+v", init)
	}
	sid := c.newSession(ctx, t.TempDir())
	c.endTurn(ctx, sid, "hi")
	// The client-side reader has seen every line before the response, so
	// the updates are complete here.
	ups := c.updates(sid)
	if got, want := text(ups), "Hello from the scripted model, in pieces."; got != want {
		t.Fatalf("streamed text %q, want %q", got, want)
	}
	if n := count(ups, "agent_message_chunk"); n < 2 {
		t.Fatalf("%d agent_message_chunk updates, want the answer streamed in several", n)
	}
	if code := p.hangUp(ctx); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr)
	}
	if bad := c.badLines(); len(bad) > 0 {
		t.Fatalf("stdout lines that are not JSON-RPC messages:\n%s", strings.Join(bad, "\n"))
	}
}

func TestStdoutCarriesOnlyJSONRPCMessagesWithDebugLogsAndNoisyTools(t *testing.T) {
	ctx := testkit.Context(t)
	// A turn that runs a command writing to both of its streams, reads a
	// file, and thinks: every path that could leak onto stdout.
	script := writeScript(t, `{"rules": [
	  {"user": "go", "step": 0, "reasoning": "Let me run it.", "text": "Running.",
	   "toolCalls": [
	     {"name": "run_command", "arguments": {"command": "echo to-stdout; echo to-stderr >&2"}},
	     {"name": "read_file", "arguments": {"path": "notes.txt"}}]},
	  {"user": "go", "step": 1, "text": "Done: {{tool}}"},
	  {"text": "You said: {{user}}"}
	]}`)
	dir := t.TempDir()
	testkit.Write(t, dir, "notes.txt", "some notes\n")
	p := start(t, opts{}, "--model", "scripted:"+script, "--state-dir", t.TempDir(), "--log-level", "debug", "--mode", "yolo")
	c := stdioWire(p)
	sid := c.openSession(ctx, dir)
	c.endTurn(ctx, sid, "go")
	if n := count(c.updates(sid), "tool_call"); n != 2 {
		t.Fatalf("%d tool calls, want 2", n)
	}
	c.callFail(ctx, "no/such/method", map[string]any{})
	c.sendRawLine(t, "this is not json")
	c.waitUnmatched(ctx, -32700)
	if code := p.hangUp(ctx); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr)
	}
	<-c.done
	if bad := c.badLines(); len(bad) > 0 {
		t.Fatalf("stdout lines that are not JSON-RPC messages:\n%s", strings.Join(bad, "\n"))
	}
	logs := p.stderr.String()
	if !strings.Contains(logs, "DBG") {
		t.Fatalf("no debug logs on stderr:\n%s", logs)
	}
}

// sendRawLine writes one line as is.
func (c *wire) sendRawLine(t testing.TB, line string) {
	t.Helper()
	if err := c.writeLine([]byte(line)); err != nil {
		t.Fatal(err)
	}
}
