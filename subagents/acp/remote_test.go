//go:build unix

package acpprovider_test

// These tests cover the remote binding (address=): one agent over
// WebSocket or Streamable HTTP, and a fleet of several.

import (
	"context"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dshd/dshd/subagents"
	acpprovider "github.com/dshd/dshd/subagents/acp"
)

// remoteDshd runs the test's dshd on an http listener and returns it; its
// addr is the /acp URL.
func remoteDshd(t *testing.T, script string, env []string, extra ...string) *daemon {
	t.Helper()
	if !filepath.IsAbs(script) {
		script = testdata(t, script)
	}
	args := append([]string{"serve", "--model", "scripted:" + script, "--state-dir", t.TempDir(), "--mode", "ask", "--listen", "http://127.0.0.1:0"}, extra...)
	cmd := exec.Command(dshdBin, args...)
	cmd.Env = append(os.Environ(), env...)
	return startDaemon(t, cmd, (*exec.Cmd).StderrPipe, listenedAddr)
}

func wsOf(u string) string { return "ws" + strings.TrimPrefix(u, "http") }

func TestRemote_ADshdChildOverWebSocketAndStreamableHTTP(t *testing.T) {
	p := newProvider(t, nil)
	parent := newParent(t, parentOpts{})
	d := remoteDshd(t, "echo.json", nil)
	for _, addr := range []string{wsOf(d.addr), d.addr} {
		t.Run(addr[:strings.Index(addr, ":")], func(t *testing.T) {
			for _, prompt := range []string{"first", "second"} {
				if res := ask(t, p, parent, prompt, map[string]string{"address": addr}); res.StopReason != subagents.StopCompleted || res.Output != "You said: "+prompt {
					t.Fatalf("result = %+v", res)
				}
			}
		})
	}
}

func TestRemote_TheTokenComesFromTokenEnv(t *testing.T) {
	p := newProvider(t, nil)
	parent := newParent(t, parentOpts{})
	const token = "provider-token-0123456789"
	d := remoteDshd(t, "echo.json", []string{"DSHD_TOKEN=" + token})
	t.Setenv("TEST_REMOTE_TOKEN", token)
	for _, addr := range []string{wsOf(d.addr), d.addr} {
		if res := ask(t, p, parent, "hi", map[string]string{"address": addr, "token-env": "TEST_REMOTE_TOKEN"}); res.Output != "You said: hi" {
			t.Fatalf("%s with the token: %+v", addr, res)
		}
		res := ask(t, p, parent, "hi", map[string]string{"address": addr})
		if res.StopReason != subagents.StopError || !strings.Contains(res.Diagnostic, "401") || !strings.Contains(res.Diagnostic, addr) {
			t.Fatalf("%s without the token: %+v", addr, res)
		}
	}
}

// tsRemoteAgent runs the SDK's experimental server hosting its echo agent
// (conformance/interop/remote-agent.mjs), or skips without node.
func tsRemoteAgent(t *testing.T) *daemon {
	t.Helper()
	node, dir := interopDir(t, "ws")
	cmd := exec.Command(node, filepath.Join(dir, "remote-agent.mjs"))
	return startDaemon(t, cmd, (*exec.Cmd).StdoutPipe, func(line string) (string, bool) {
		return strings.CutPrefix(line, "listening ")
	})
}

func TestRemote_TheSDKsExperimentalServerAsAChild(t *testing.T) {
	p := newProvider(t, nil)
	parent := newParent(t, parentOpts{})
	d := tsRemoteAgent(t)
	for _, addr := range []string{wsOf(d.addr), d.addr} {
		res := ask(t, p, parent, "hello over "+addr[:2], map[string]string{"address": addr})
		if res.StopReason != subagents.StopCompleted || res.Output != "echo: hello over "+addr[:2] {
			t.Fatalf("%s: %+v", addr, res)
		}
	}
}

// proxy forwards TCP connections to a backend until cut, which drops
// every connection open at that moment, as a network failure would.
type proxy struct {
	l       net.Listener
	backend string
	mu      sync.Mutex
	conns   []net.Conn
	wg      sync.WaitGroup
}

func newProxy(t *testing.T, backend string) *proxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{l: l, backend: backend}
	p.wg.Go(p.accept)
	t.Cleanup(func() {
		l.Close()
		p.cut()
		p.wg.Wait()
	})
	return p
}

func (p *proxy) accept() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		b, err := net.Dial("tcp", p.backend)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, b)
		p.mu.Unlock()
		p.wg.Go(func() { io.Copy(b, c); b.Close() })
		p.wg.Go(func() { io.Copy(c, b); c.Close() })
	}
}

func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func TestRemote_AConnectionDroppedDuringARunIsRetriedOnceThroughTheSession(t *testing.T) {
	script, gate := gateScript(t)
	d := remoteDshd(t, script, nil, "--mode", "yolo")
	for _, scheme := range []string{"ws", "http"} {
		t.Run(scheme, func(t *testing.T) {
			os.Remove(gate)
			p := newProvider(t, nil)
			parent := newParent(t, parentOpts{})
			u, _ := url.Parse(d.addr)
			px := newProxy(t, u.Host)
			addr := scheme + "://" + px.l.Addr().String() + "/acp"
			progress := newProgressLog()
			run := start(t, p, subagents.StartRequest{Prompt: "gated task", Parent: parent.Scope, Options: map[string]string{"address": addr}, Progress: progress.report})
			defer run.Dispose()
			progress.waitText(t, "waiting at the gate")
			px.cut()
			os.WriteFile(gate, nil, 0o600)
			res := wait(t, run)
			if res.StopReason != subagents.StopCompleted || res.Output != "through the gate" {
				t.Fatalf("result = %+v", res)
			}
		})
	}
}

func TestRemote_ARunWhoseAgentIsGoneEndsWithAnErrorNamingTheAddress(t *testing.T) {
	p := newProvider(t, nil)
	parent := newParent(t, parentOpts{})
	d := remoteDshd(t, "echo.json", nil)
	addr := wsOf(d.addr)
	progress := newProgressLog()
	run := start(t, p, subagents.StartRequest{Prompt: "hang here", Parent: parent.Scope, Options: map[string]string{"address": addr}, Progress: progress.report})
	defer run.Dispose()
	progress.waitText(t, "Working on it.")
	d.kill()
	res := wait(t, run)
	wantError(t, res, addr)
}

// fleetMember is a dshd on an http listener with a state dir the test
// reads.
type fleetMember struct {
	*daemon
	state string
}

func startMember(t *testing.T, script, listen string) *fleetMember {
	t.Helper()
	state := t.TempDir()
	cmd := exec.Command(dshdBin, "serve", "--model", "scripted:"+script, "--state-dir", state, "--mode", "yolo", "--listen", listen)
	d := startDaemon(t, cmd, (*exec.Cmd).StderrPipe, listenedAddr)
	return &fleetMember{daemon: d, state: state}
}

// sessions counts the session journals the member has written.
func (m *fleetMember) sessions(t *testing.T) int {
	t.Helper()
	n := 0
	filepath.WalkDir(m.state, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".jsonl") {
			n++
		}
		return nil
	})
	return n
}

// gateScript is a script whose "gated" task waits for a file before it
// answers "through the gate".
func gateScript(t *testing.T) (script, gate string) {
	dir := t.TempDir()
	gate = filepath.Join(dir, "gate")
	script = filepath.Join(dir, "gate.json")
	os.WriteFile(script, []byte(`{"rules":[
	 {"user":"^gated","step":0,"text":"waiting at the gate","toolCalls":[{"name":"run_command","arguments":{"command":"while [ ! -e `+gate+` ]; do sleep 0.02; done"}}]},
	 {"user":"^gated","step":1,"text":"through the gate"},
	 {"text":"You said: {{user}}"}]}`), 0o600)
	return script, gate
}

// startGated starts n gated runs and waits until each is at the gate.
func startGated(t *testing.T, p *acpprovider.Provider, parent interface{ Scope() *subagents.Scope }, n int, opts map[string]string) []subagents.Run {
	t.Helper()
	var runs []subagents.Run
	for i := range n {
		progress := newProgressLog()
		r := start(t, p, subagents.StartRequest{Prompt: "gated task " + string(rune('a'+i)), Parent: parent.Scope(), Options: opts, Progress: progress.report})
		t.Cleanup(func() { r.Dispose() })
		progress.waitText(t, "waiting at the gate")
		runs = append(runs, r)
	}
	return runs
}

type scoped struct{ s *subagents.Scope }

func (s scoped) Scope() *subagents.Scope { return s.s }

func TestFleet_RunsGoToTheLeastLoadedEndpointSkipAFailedOneAndSurviveAKill(t *testing.T) {
	script, gate := gateScript(t)
	a := startMember(t, script, "http://127.0.0.1:0")
	b := startMember(t, script, "http://127.0.0.1:0")
	p := newProvider(t, nil)
	parent := newParent(t, parentOpts{})
	opts := map[string]string{"address": wsOf(a.addr) + " " + wsOf(b.addr)}

	runs := startGated(t, p, scoped{parent.Scope}, 4, opts)
	if na, nb := a.sessions(t), b.sessions(t); na != 2 || nb != 2 {
		t.Fatalf("sessions placed %d and %d, want 2 and 2 (least loaded)", na, nb)
	}
	// One member dies with two runs on it; they go on on the other.
	a.kill()
	os.WriteFile(gate, nil, 0o600)
	var wg sync.WaitGroup
	results := make([]subagents.Result, len(runs))
	for i, r := range runs {
		wg.Go(func() { results[i] = wait(t, r) })
	}
	wg.Wait()
	for i, res := range results {
		if res.StopReason != subagents.StopCompleted || res.Output != "through the gate" {
			t.Fatalf("run %d: %+v", i, res)
		}
	}
	if nb := b.sessions(t); nb != 4 {
		t.Fatalf("the surviving member has %d sessions, want 4 (its 2 and the 2 moved)", nb)
	}
	// The dead member is skipped.
	if res := ask(t, p, parent, "after the kill", opts); res.StopReason != subagents.StopCompleted || res.Output != "You said: after the kill" {
		t.Fatalf("a run after the kill: %+v", res)
	}
}

func TestFleet_ANameThatResolvesToSeveralAddressesIsAFleet(t *testing.T) {
	script, _ := gateScript(t)
	a := startMember(t, script, "http://127.0.0.2:0")
	u, _ := url.Parse(a.addr)
	b := startMember(t, script, "http://127.0.0.3:"+u.Port())
	p := newProvider(t, &acpprovider.Options{LookupHost: func(ctx context.Context, host string) ([]string, error) {
		if host != "dshd.fleet.test" {
			t.Errorf("looked up %q", host)
		}
		return []string{"127.0.0.3", "127.0.0.2"}, nil
	}})
	parent := newParent(t, parentOpts{})
	opts := map[string]string{"address": "ws://dshd.fleet.test:" + u.Port() + "/acp"}
	startGated(t, p, scoped{parent.Scope}, 2, opts)
	if na, nb := a.sessions(t), b.sessions(t); na != 1 || nb != 1 {
		t.Fatalf("sessions placed %d and %d, want 1 and 1", na, nb)
	}
}
