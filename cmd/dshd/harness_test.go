// This file holds what the end-to-end tests start with: a dshd on stdio
// against the fake model server or the scripted model, a socket daemon
// that has begun listening, the handshake and first session of a client,
// a turn that must end, an editor's usual answers, and the fake model's
// routing for a parent that delegates one task to a child.

package main

import (
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
	"github.com/dshd/dshd/internal/testkit"
)

// daemonToken is a token long enough for the daemon to accept.
const daemonToken = "e2e-daemon-token-0123456789"

// fakeModel is a fake OpenAI-compatible server on loopback, closed with
// the test.
func fakeModel(t testing.TB) *openaitest.Server {
	srv := openaitest.New()
	t.Cleanup(srv.Close)
	return srv
}

// modelArgs point a daemon at srv, with no key, and give it a state dir
// of its own.
func modelArgs(t testing.TB, srv *openaitest.Server, extra ...string) []string {
	return append([]string{"--model-url", srv.URL(), "--model", "m", "--api-key-env", "", "--state-dir", t.TempDir()}, extra...)
}

// fakeDaemon starts dshd on stdio against the fake model server.
func fakeDaemon(t testing.TB, srv *openaitest.Server, extra ...string) (*proc, *wire) {
	t.Helper()
	p := start(t, opts{}, modelArgs(t, srv, extra...)...)
	return p, stdioWire(p)
}

// modelDaemon starts dshd on stdio against a fake model server whose
// requests h answers.
func modelDaemon(t testing.TB, h func(*openaitest.Request) openaitest.Reply, extra ...string) (*openaitest.Server, *proc, *wire) {
	t.Helper()
	srv := fakeModel(t)
	srv.Handle(h)
	p, c := fakeDaemon(t, srv, extra...)
	return srv, p, c
}

// modelSession starts a daemon on a fake model that answers with h and
// opens a session in ws.
func modelSession(ctx context.Context, t testing.TB, ws string, h func(*openaitest.Request) openaitest.Reply) (*openaitest.Server, *wire, string) {
	t.Helper()
	srv, _, c := modelDaemon(t, h)
	return srv, c, c.openSession(ctx, ws)
}

// answer is a fake model that answers every request with text.
func answer(text string) func(*openaitest.Request) openaitest.Reply {
	return func(*openaitest.Request) openaitest.Reply { return openaitest.Text(text) }
}

// stdioDaemon starts dshd on stdio with a script and a state dir.
func stdioDaemon(t testing.TB, script, state string, extra ...string) (*proc, *wire) {
	t.Helper()
	args := append([]string{"--model", "scripted:" + script, "--state-dir", state}, extra...)
	p := start(t, opts{}, args...)
	return p, stdioWire(p)
}

// openSession runs the handshake with no client capabilities and creates
// a session in cwd.
func (c *wire) openSession(ctx context.Context, cwd string) string {
	c.t.Helper()
	c.initialize(ctx, nil)
	return c.newSession(ctx, cwd)
}

// newParams are session/new's params for cwd, with no MCP servers.
func newParams(cwd string) map[string]any {
	return map[string]any{"cwd": cwd, "mcpServers": []any{}}
}

// endTurn runs a turn and fails the test unless it ends with end_turn.
func (c *wire) endTurn(ctx context.Context, sid, text string) {
	c.t.Helper()
	if stop := c.prompt(ctx, sid, text); stop != "end_turn" {
		c.t.Fatalf("%q: stop reason %q%s", text, stop, c.stderrTail())
	}
}

// stderrTail is the daemon's stderr for a failure message, when the wire
// talks to a process it started.
func (c *wire) stderrTail() string {
	if c.stderr == nil {
		return ""
	}
	return "; stderr:\n" + c.stderr.String()
}

// fsCaps are the client capabilities of an editor that serves fs/*.
var fsCaps = map[string]any{"fs": map[string]any{"readTextFile": true, "writeTextFile": true}}

// notFound answers a request the test's editor does not serve.
var notFound = &rpcErr{Code: -32601, Message: "Method not found"}

// socketPath returns a fresh socket path.
func socketPath(t testing.TB) string {
	t.Helper()
	return filepath.Join(testkit.ShortDir(t, "dshd-e2e"), "d.sock")
}

// serveIn starts `dshd serve --listen listen` on the scripted model with
// state as its state dir and waits until it listens.
func serveIn(t testing.TB, o opts, listen, state string, extra ...string) *proc {
	t.Helper()
	args := append([]string{"serve", "--listen", listen, "--model", "scripted", "--state-dir", state}, extra...)
	p := start(t, o, args...)
	waitListening(t, p)
	return p
}

// serveUnix starts a socket daemon on a fresh path and waits until it
// listens.
func serveUnix(t testing.TB, extra ...string) (*proc, string) {
	t.Helper()
	path := socketPath(t)
	return serveUnixAt(t, path, extra...), path
}

func serveUnixAt(t testing.TB, path string, extra ...string) *proc {
	t.Helper()
	return serveIn(t, opts{}, "unix:"+path, t.TempDir(), extra...)
}

// serveTCP starts a tcp daemon on host and a free port, and returns the
// port.
func serveTCP(t testing.TB, host string, extra ...string) (*proc, string) {
	t.Helper()
	port := freePort(t)
	return serveIn(t, opts{}, "tcp:"+net.JoinHostPort(host, port), t.TempDir(), extra...), port
}

// serveTokenTCP starts a tcp daemon that requires daemonToken and returns
// it with its address.
func serveTokenTCP(t testing.TB, o opts, extra ...string) (*proc, string) {
	t.Helper()
	addr := "127.0.0.1:" + freePort(t)
	o.env = append(o.env, "DSHD_TOKEN="+daemonToken)
	return serveIn(t, o, "tcp:"+addr, t.TempDir(), extra...), addr
}

func waitListening(t testing.TB, p *proc) {
	t.Helper()
	p.waitLogged(testkit.Context(t), t, "dshd listening")
}

// waitLogged waits until p's stderr shows text, and fails t otherwise,
// saying so when dshd exited first.
func (p *proc) waitLogged(ctx context.Context, t testing.TB, text string) {
	t.Helper()
	if _, err := p.stderr.waitFor(ctx, text); err != nil {
		select {
		case <-p.done:
			t.Fatalf("dshd exited: %v; stderr:\n%s", p.err, p.stderr)
		default:
		}
		t.Fatalf("%v; stderr:\n%s", err, p.stderr)
	}
}

// hangUp closes a stdio daemon's stdin, as an editor that quits does,
// and returns its exit code.
func (p *proc) hangUp(ctx context.Context) int {
	p.stdin.Close()
	return p.wait(ctx)
}

// stop ends a socket daemon with SIGTERM and checks it exits 0.
func (p *proc) stop(t testing.TB) {
	t.Helper()
	p.signal(syscall.SIGTERM)
	if code := p.wait(testkit.Context(t)); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr)
	}
}

// freePort returns a loopback port nobody listens on right now.
func freePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// checkServes checks that the daemon at addr serves a new client: a
// handshake and a session.
func checkServes(ctx context.Context, t testing.TB, network, addr string) {
	t.Helper()
	c := dialWire(t, network, addr)
	c.openSession(ctx, t.TempDir())
	c.closer.Close()
}

// authenticate runs the handshake and authenticates with token.
func authenticate(ctx context.Context, c *wire, token string) {
	c.t.Helper()
	c.initialize(ctx, nil)
	c.call(ctx, "authenticate", tokenParams(token), nil)
}

// tokenParams are authenticate's params for the token method.
func tokenParams(token string) map[string]any {
	return map[string]any{"methodId": "token", "_meta": map[string]any{"dshd.dev/token": token}}
}

// delegation routes the fake model's requests for a parent that delegates
// one task ("child task") through its subagent tool via: the child makes
// call, then reports what the tool answered ("child saw: …"), and the
// parent ends ("parent done"). usage, when set, is what the child's two
// answers report.
type delegation struct {
	via   string
	call  openaitest.ToolCall
	usage [2]*openaitest.Usage
}

func (d delegation) serve(srv *openaitest.Server) {
	srv.Handle(func(r *openaitest.Request) openaitest.Reply {
		c := r.Chat
		tool := ""
		for _, m := range c.Messages {
			if m.Role == "tool" {
				_ = json.Unmarshal(m.Content, &tool)
			}
		}
		child := strings.Contains(c.LastUserText(), "child task")
		switch {
		case child && tool == "":
			return openaitest.Reply{ToolCalls: []openaitest.ToolCall{d.call}, Usage: d.usage[0]}
		case child:
			return openaitest.Reply{Text: []string{"child saw: " + tool}, Usage: d.usage[1]}
		case tool == "":
			return openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "p1", Name: d.via, Arguments: `{"description":"d","prompt":"child task"}`}}}
		}
		return openaitest.Text("parent done")
	})
}

// childToolResult is what the child's model got back from its tool call.
func childToolResult(srv *openaitest.Server) string {
	for _, r := range srv.ChatRequests() {
		if !strings.Contains(r.LastUserText(), "child task") {
			continue
		}
		for _, m := range r.Messages {
			if m.Role == "tool" {
				var s string
				_ = json.Unmarshal(m.Content, &s)
				return s
			}
		}
	}
	return ""
}

// toolResults are the contents of every tool message the model was sent.
func toolResults(srv *openaitest.Server) []string {
	var out []string
	for _, r := range srv.Requests() {
		if r.Chat == nil {
			continue
		}
		for _, m := range r.Chat.Messages {
			if m.Role == "tool" {
				var s string
				_ = json.Unmarshal(m.Content, &s)
				out = append(out, s)
			}
		}
	}
	return out
}
