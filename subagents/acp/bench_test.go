//go:build unix

package acpprovider_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/agent/llm/scripted"
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/subagents/spawn"
	st "github.com/dshd/dshd/subagents/subagenttest"
)

// The benchmarks compare one delegated task ("hi", answered "You said: hi"
// by the scripted model) run in process (spawn) and over ACP. Run with
//
//	go test -run '^$' -bench . ./subagents/acp/

// benchArgs are dshdArgs with the journals on tmpfs when the system has
// one, so fsync latency (the disk's, not the protocol's) does not swamp
// the figures.
func benchArgs(b *testing.B, script string, extra ...string) []string {
	args := dshdArgs(b, script, extra...)
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		dir, err := os.MkdirTemp("/dev/shm", "acpprovider-bench-")
		if err == nil {
			b.Cleanup(func() { os.RemoveAll(dir) })
			for i := range args {
				if args[i] == "--state-dir" {
					args[i+1] = dir
				}
			}
		}
	}
	return args
}

func benchBinding(b *testing.B, script string, extra ...string) map[string]string {
	return map[string]string{"command": dshdBin, "args": quote(benchArgs(b, script, extra...)...)}
}

func scriptedEcho(b *testing.B) *scripted.Model {
	m, err := scripted.Load(testdata(b, "echo.json"))
	if err != nil {
		b.Fatal(err)
	}
	return m.Instant()
}

// runOnce starts a run, waits for it to answer want and disposes of it.
func runOnce(b *testing.B, want string, start func() (subagents.Run, error)) {
	run, err := start()
	if err != nil {
		b.Fatal(err)
	}
	res, err := run.Wait(context.Background())
	if err != nil || res.StopReason != subagents.StopCompleted || res.Output != want {
		b.Fatalf("result %+v, %v", res, err)
	}
	run.Dispose()
}

// BenchmarkTurn_Spawn is the in-process baseline: Start, the child's turn,
// Dispose.
func BenchmarkTurn_Spawn(b *testing.B) {
	parent := st.NewParent(b, st.ParentOptions{Model: scriptedEcho(b)})
	p := spawn.New(nil)
	req := subagents.StartRequest{Prompt: "hi", Parent: parent.Scope}
	for b.Loop() {
		runOnce(b, "You said: hi", func() (subagents.Run, error) { return p.Start(context.Background(), req) })
	}
}

// BenchmarkTurn_ACPWarm is one more task for a child dshd on stdio that is
// already running (Resume): the cost of a prompt turn through one hop.
func BenchmarkTurn_ACPWarm(b *testing.B) {
	p := newProvider(b, nil)
	parent := st.NewParent(b, st.ParentOptions{})
	first, err := p.Start(context.Background(), subagents.StartRequest{Prompt: "hi", Parent: parent.Scope, Options: benchBinding(b, "echo.json")})
	if err != nil {
		b.Fatal(err)
	}
	defer first.Dispose()
	first.Wait(context.Background())
	for b.Loop() {
		runOnce(b, "You said: hi", func() (subagents.Run, error) { return first.(subagents.Resumable).Resume(context.Background(), "hi") })
	}
}

// BenchmarkTurn_DirectStdio is the child's own cost of the same turn: a
// bare ACP client prompting a running dshd on stdio. ACPWarm minus this is
// what the hop adds.
func BenchmarkTurn_DirectStdio(b *testing.B) {
	benchDirect(b, exec.Command(dshdBin, benchArgs(b, "echo.json")...), "hi")
}

// benchDirect prompts the agent cmd runs with text, from a bare ACP client
// on its stdio, once per iteration.
func benchDirect(b *testing.B, cmd *exec.Cmd, text string) {
	cl := &topClient{running: make(chan acp.SessionID, 1)}
	conn := startOnStdio(b, cmd, cl)
	defer func() { conn.Close(); cmd.Wait() }()
	ctx := context.Background()
	sid := handshake(b, ctx, conn, acp.ClientCapabilities{}, b.TempDir())
	for b.Loop() {
		if _, err := conn.Prompt(ctx, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock(text)}}); err != nil {
			b.Fatal(err)
		}
		cl.clearUpdates()
	}
}

// BenchmarkTurn_ACPCold starts a child dshd process for every task, as the
// subagent tool does: process start, handshake, session, turn, teardown.
func BenchmarkTurn_ACPCold(b *testing.B) {
	p := newProvider(b, nil)
	parent := st.NewParent(b, st.ParentOptions{})
	req := subagents.StartRequest{Prompt: "hi", Parent: parent.Scope, Options: benchBinding(b, "echo.json")}
	for b.Loop() {
		runOnce(b, "You said: hi", func() (subagents.Run, error) { return p.Start(context.Background(), req) })
	}
}

// BenchmarkTurn_ChainWarm is one more task for a running dshd whose own
// subagent tool delegates to a third dshd over ACP (that last level is
// started for each task, as the subagent tool does). It needs a dshd that
// registers the acp provider.
func BenchmarkTurn_ChainWarm(b *testing.B) {
	benchChain(b, "subagent=acp,command="+dshdBin+",args="+strings.Join(benchArgs(b, "chain.json"), " "))
}

// BenchmarkTurn_ChainWarmSocket is the same chain with every level
// running: the last dshd is a socket daemon the middle one reaches over its
// pooled connection, so no process starts during a task.
func BenchmarkTurn_ChainWarmSocket(b *testing.B) {
	benchChain(b, "subagent=acp,address=unix:"+socketDshd(b, "chain.json"))
}

// benchChain resumes a running dshd with a task its subagent tool, bound
// by inner, delegates one level further, once per iteration.
func benchChain(b *testing.B, inner string) {
	p := newProvider(b, nil)
	parent := st.NewParent(b, st.ParentOptions{})
	opts := benchBinding(b, "chain.json", "--subagent", inner)
	first, err := p.Start(context.Background(), subagents.StartRequest{Prompt: "delegate down", Parent: parent.Scope, Options: opts})
	if err != nil {
		b.Fatal(err)
	}
	defer first.Dispose()
	if res, _ := first.Wait(context.Background()); !strings.Contains(res.Output, "B reporting") {
		b.Fatalf("the chain did not run: %+v", res)
	}
	for b.Loop() {
		run, err := first.(subagents.Resumable).Resume(context.Background(), "delegate down")
		if err != nil {
			b.Fatal(err)
		}
		if res, _ := run.Wait(context.Background()); !strings.Contains(res.Output, "B reporting") {
			b.Fatalf("result %+v", res)
		}
		run.Dispose()
	}
}

// socketDshd runs a dshd daemon on a unix socket for a benchmark.
func socketDshd(b *testing.B, script string) string {
	sock := filepath.Join(b.TempDir(), "d.sock")
	cmd := exec.Command(dshdBin, benchArgs(b, script, "--listen", "unix:"+sock)...)
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.Now().Add(watchdog)
	for {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			return sock
		}
		if time.Now().After(deadline) {
			b.Fatal("the daemon did not listen")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// BenchmarkSocket_PooledRun is a whole run on a socket daemon through the
// provider's pooled connection: session/new, prompt, session/close.
func BenchmarkSocket_PooledRun(b *testing.B) {
	sock := socketDshd(b, "echo.json")
	p := newProvider(b, nil)
	parent := st.NewParent(b, st.ParentOptions{})
	req := subagents.StartRequest{Prompt: "hi", Parent: parent.Scope, Options: map[string]string{"address": "unix:" + sock}}
	runOnce(b, "You said: hi", func() (subagents.Run, error) { return p.Start(context.Background(), req) })
	for b.Loop() {
		runOnce(b, "You said: hi", func() (subagents.Run, error) { return p.Start(context.Background(), req) })
	}
}

// BenchmarkSocket_DirectRun is the same work done by a bare ACP client on
// one connection, with the same capabilities and session/new _meta as the
// provider's (the daemon does more for a delegated session): the child's
// own cost, which the pooled run adds to.
func BenchmarkSocket_DirectRun(b *testing.B) {
	sock := socketDshd(b, "echo.json")
	cl := &topClient{running: make(chan acp.SessionID, 1)}
	conn := dialUnix(b, sock, cl)
	ctx := context.Background()
	caps := acp.ClientCapabilities{FS: acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}}
	if _, err := conn.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: caps}); err != nil {
		b.Fatal(err)
	}
	cwd := b.TempDir()
	meta := acp.Meta{"dshd.dev/depth": 1, "dshd.dev/maxDepth": subagents.DefaultMaxDepth}
	for b.Loop() {
		s, err := conn.NewSession(ctx, &acp.NewSessionRequest{Cwd: cwd, Meta: meta})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := conn.Prompt(ctx, &acp.PromptRequest{SessionID: s.SessionID, Prompt: []acp.ContentBlock{acp.TextBlock("hi")}}); err != nil {
			b.Fatal(err)
		}
		if _, err := conn.CloseSession(ctx, &acp.CloseSessionRequest{SessionID: s.SessionID}); err != nil {
			b.Fatal(err)
		}
		cl.clearUpdates()
	}
}

// BenchmarkHop_ACPWarm is one task for a running minimal agent (the fake,
// which answers at once and keeps no journal) through the provider: the
// cost of the hop itself, both ends included.
func BenchmarkHop_ACPWarm(b *testing.B) {
	p := newProvider(b, nil)
	parent := st.NewParent(b, st.ParentOptions{})
	first, err := p.Start(context.Background(), subagents.StartRequest{Prompt: "echo hi", Parent: parent.Scope, Options: fakeBinding(modeAgent)})
	if err != nil {
		b.Fatal(err)
	}
	defer first.Dispose()
	first.Wait(context.Background())
	for b.Loop() {
		runOnce(b, "echo: hi", func() (subagents.Run, error) {
			return first.(subagents.Resumable).Resume(context.Background(), "echo hi")
		})
	}
}

// BenchmarkHop_Direct is the same prompt from a bare ACP client: the
// transport and the agent, without the provider.
func BenchmarkHop_Direct(b *testing.B) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), fakeEnv+"="+modeAgent)
	benchDirect(b, cmd, "echo hi")
}

// BenchmarkTurn_DirectCold is what ACPCold does, by a bare client: start
// dshd, initialize, session/new, prompt, close stdin, reap.
func BenchmarkTurn_DirectCold(b *testing.B) {
	args := benchArgs(b, "echo.json")
	cwd := b.TempDir()
	ctx := context.Background()
	for b.Loop() {
		cmd := exec.Command(dshdBin, args...)
		conn := startOnStdio(b, cmd, &topClient{running: make(chan acp.SessionID, 1)})
		sid := handshake(b, ctx, conn, acp.ClientCapabilities{}, cwd)
		if _, err := conn.Prompt(ctx, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("hi")}}); err != nil {
			b.Fatal(err)
		}
		conn.Close()
		cmd.Wait()
	}
}
