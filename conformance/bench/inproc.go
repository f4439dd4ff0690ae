// This file measures the server in-process, wired as the daemon wires it:
// per-turn overhead on an instant scripted model, the heap of idle
// sessions, and the stream's notification rate. It speaks ACP to the
// server over a pipe on purpose: the figure is the ACP server's own cost
// per turn (decode, session, translation, journal, encode), the goal the
// README names.

package main

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"time"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/acp/server"
	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/agent/llm/scripted"
	"github.com/dshd/dshd/agent/session"
	"github.com/dshd/dshd/internal/noeditor"
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/subagents/fork"
	"github.com/dshd/dshd/subagents/spawn"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/builtin"
	"github.com/dshd/dshd/tools/subagent"

	acprpc "github.com/dshd/dshd/acp/rpc"
)

// inproc is a server and one client connection in this process.
type inproc struct {
	client *acprpc.ClientSideConn
	cwd    string
	close  func()
}

// newInproc wires a server over a state dir with an instant scripted model.
func newInproc(stateDir, cwd string) (*inproc, error) {
	store, err := session.NewStore(stateDir, nil)
	if err != nil {
		return nil, err
	}
	m, err := scripted.Parse([]byte(`{"rules": [{"text": "You said: {{user}}"}]}`))
	if err != nil {
		return nil, err
	}
	model := m.Instant()
	infos, _ := model.Models(context.Background())
	base := tools.NewRegistry(nil)
	for _, t := range builtin.Builtins(nil) {
		if _, err := base.Register(t); err != nil {
			return nil, err
		}
	}
	var closers []func()
	svc := subagents.NewService(nil)
	for _, p := range []subagents.Provider{spawn.New(nil), fork.New(nil)} {
		dispose, err := svc.RegisterProvider(p)
		if err != nil {
			return nil, err
		}
		closers = append(closers, dispose)
	}
	for _, b := range subagent.DefaultBindings() {
		dispose, err := subagent.Bind(svc, base, b, nil)
		if err != nil {
			return nil, err
		}
		closers = append(closers, dispose)
	}
	srv, err := server.New(server.Options{
		Store: store, Model: model, DefaultModel: infos[0].ID,
		Models:    func() []llm.Info { return infos },
		Tools:     base,
		Subagents: svc,
		Agents:    &agent.Registry{},
	})
	if err != nil {
		return nil, err
	}
	agentEnd, clientEnd := net.Pipe()
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.ServeConn(context.Background(), agentEnd)
	}()
	client := acprpc.NewClientSideConn(clientEnd, quietClient{}, nil)
	ip := &inproc{client: client, cwd: cwd, close: func() {
		client.Close()
		<-served
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}}
	if _, err := client.Initialize(context.Background(), &acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersion1}); err != nil {
		ip.close()
		return nil, err
	}
	return ip, nil
}

func (ip *inproc) newSession(ctx context.Context) (acp.SessionID, error) {
	resp, err := ip.client.NewSession(ctx, &acp.NewSessionRequest{Cwd: ip.cwd, McpServers: []acp.McpServer{}})
	if err != nil {
		return "", err
	}
	return resp.SessionID, nil
}

// turnsPerSession bounds the history a measured turn carries: the model
// request holds the whole conversation, so a long one measures the
// history, not the server.
const turnsPerSession = 20

// turnOverhead runs n turns, on a fresh session every turnsPerSession
// turns, and returns the mean time and allocations per turn (session
// creation excluded).
func turnOverhead(stateDir, cwd string, n int) (time.Duration, uint64, error) {
	ip, err := newInproc(stateDir, cwd)
	if err != nil {
		return 0, 0, err
	}
	defer ip.close()
	ctx := context.Background()
	req := &acp.PromptRequest{Prompt: []acp.ContentBlock{acp.TextBlock("hello")}}
	var total time.Duration
	var mallocs uint64
	var ms runtime.MemStats
	run := func(n int, measure bool) error {
		for i := range n {
			if i%turnsPerSession == 0 {
				sid, err := ip.newSession(ctx)
				if err != nil {
					return err
				}
				req.SessionID = sid
			}
			runtime.ReadMemStats(&ms)
			m0, start := ms.Mallocs, time.Now()
			resp, err := ip.client.Prompt(ctx, req)
			d := time.Since(start)
			runtime.ReadMemStats(&ms)
			if err == nil && resp.StopReason != acp.StopReasonEndTurn {
				err = errors.New("stop reason " + string(resp.StopReason))
			}
			if err != nil {
				return err
			}
			if measure {
				total += d
				mallocs += ms.Mallocs - m0
			}
		}
		return nil
	}
	if err := run(min(n/10, 200), false); err != nil { // warm up
		return 0, 0, err
	}
	if err := run(n, true); err != nil {
		return 0, 0, err
	}
	return total / time.Duration(n), mallocs / uint64(n), nil
}

// fsyncCost is the mean time of one small append plus fsync in dir: the
// floor a turn pays for its durable journal on this disk.
func fsyncCost(dir string, n int) (time.Duration, error) {
	f, err := os.CreateTemp(dir, "fsync")
	if err != nil {
		return 0, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	line := []byte(`{"kind":"update","data":{}}` + "\n")
	start := time.Now()
	for range n {
		if _, err := f.Write(line); err != nil {
			return 0, err
		}
		if err := f.Sync(); err != nil {
			return 0, err
		}
	}
	return time.Since(start) / time.Duration(n), nil
}

// idleSessionHeap opens n sessions and returns the live heap they hold,
// per session.
func idleSessionHeap(stateDir, cwd string, n int) (int64, error) {
	ip, err := newInproc(stateDir, cwd)
	if err != nil {
		return 0, err
	}
	defer ip.close()
	ctx := context.Background()
	if _, err := ip.newSession(ctx); err != nil { // warm caches
		return 0, err
	}
	heap := func() int64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapInuse)
	}
	before := heap()
	for range n {
		if _, err := ip.newSession(ctx); err != nil {
			return 0, err
		}
	}
	after := heap()
	return (after - before) / int64(n), nil
}

// streamRate writes n text-chunk session/update notifications to a pipe
// and returns notifications per second.
func streamRate(n int) (float64, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		_, _ = io.Copy(io.Discard, r)
	}()
	s := acprpc.NewStream(eofReader{}, w, w, nil)
	n0 := &acp.SessionNotification{SessionID: "s_0123456789abcdef", Update: &acp.AgentMessageChunk{Content: acp.TextBlock("a chunk of streamed text"), MessageID: "m_1"}}
	start := time.Now()
	for range n {
		if err := s.WriteNotification(acp.MethodSessionUpdate, n0); err != nil {
			return 0, err
		}
	}
	s.Close() // writes what is still queued
	elapsed := time.Since(start)
	<-drained
	r.Close()
	return float64(n) / elapsed.Seconds(), nil
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// quietClient is a client that accepts updates and offers nothing else.
type quietClient struct{ noeditor.Methods }

func (quietClient) SessionUpdate(context.Context, *acp.SessionNotification) error { return nil }
func (quietClient) RequestPermission(context.Context, *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
	return &acp.RequestPermissionResponse{Outcome: &acp.CancelledPermissionOutcome{}}, nil
}
