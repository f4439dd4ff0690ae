// This file serves the child's terminal/* requests on the parent's runner:
// one goroutine per terminal runs the (blocking) command while the child
// polls its output, waits for it, kills and releases it.

package acpprovider

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/subagents/internal/runkit"
	"github.com/dshd/dshd/tools"
)

// terminals are a child's live terminals.
type terminals struct {
	mu   sync.Mutex
	seq  int
	byID map[acp.TerminalID]*terminal // guarded by mu
	// logged is set once a terminal was refused for the limit, and
	// loggedCut once a terminal's output was cut at
	// Options.MaxTerminalOutput; guarded by mu.
	logged, loggedCut bool
	wg                sync.WaitGroup
}

// terminal is one command the child runs on the parent's runner.
type terminal struct {
	id     acp.TerminalID
	cancel context.CancelFunc
	done   chan struct{}
	out    tailBuffer
	status acp.TerminalExitStatus // written before done is closed
}

// createTerminal checks the command against the parent's gate (unless a
// permission question of the child's just allowed it), confines its cwd
// to the workspace and starts it.
func (c *child) createTerminal(ctx context.Context, req *acp.CreateTerminalRequest) (*acp.CreateTerminalResponse, error) {
	dir := c.cwd
	if req.Cwd != "" {
		dir = req.Cwd
	}
	dir, err := c.resolve(dir)
	if err != nil {
		return nil, err
	}
	if err := c.terms.room(c); err != nil {
		return nil, err
	}
	// The child may ask for less than the parent keeps, not for more:
	// each terminal's tail is held until it is released, and each
	// terminal/output answer holds it once more.
	limit := c.p.o.MaxTerminalOutput
	if req.OutputByteLimit != nil {
		limit = int(min(*req.OutputByteLimit, uint64(limit)))
	}
	// The parent's workspace roots: its sandbox lets the command write there.
	cmd := tools.Command{Command: req.Command, Args: req.Args, Dir: dir, Roots: c.env.Workspace.Roots(), OutputLimit: max(limit, 1)}
	if len(req.Args) == 0 {
		// The runner hands an argument-less command to the shell; quote it
		// so it still names one program, as terminal/create means.
		cmd.Command = shellQuote(req.Command)
	}
	for _, e := range req.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	if !c.grants.takeExec() {
		// The whole command, its cwd and the parent's sandbox.
		q, err := tools.AskCommand(c.env.Runner, cmd)
		if err != nil {
			return nil, err
		}
		err = c.gateAction(ctx, tools.PermissionRequest{
			ToolName: gateExecute,
			Title:    "Run " + q.Title,
			Kind:     tools.KindExecute,
			Effect:   tools.EffectExecute,
			Content:  q.Content,
		})
		if err != nil {
			return nil, err
		}
	}
	var cut func()
	if limit == c.p.o.MaxTerminalOutput {
		// A cut the child asked for is its own business; one at the
		// parent's limit is said, once per child.
		cut = func() { c.terms.cutAtLimit(c) }
	}
	t := c.terms.start(c.ctx, c.env.Runner, cmd, limit, cut)
	return &acp.CreateTerminalResponse{TerminalID: t.id}, nil
}

// cutAtLimit logs the first terminal of the child whose output went over
// the parent's limit (the child still reads the tail, marked truncated).
func (ts *terminals) cutAtLimit(c *child) {
	ts.mu.Lock()
	first := !ts.loggedCut
	ts.loggedCut = true
	ts.mu.Unlock()
	if first {
		c.log.Warn("a terminal of the agent's printed more than the output limit; keeping its tail", "setting", c.p.o.Settings.MaxTerminalOutput, "limit", c.p.o.MaxTerminalOutput)
	}
}

// room refuses a new terminal while the child has MaxTerminals of them
// (running or not yet released: each keeps its output), logging the first
// refusal. The check is made before the gate is asked; terminals are
// created one request at a time per child in practice, and a race of
// concurrent creates overshoots by those in flight only.
func (ts *terminals) room(c *child) error {
	limit := c.p.o.MaxTerminals
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if len(ts.byID) < limit {
		return nil
	}
	if !ts.logged {
		ts.logged = true
		c.log.Warn("refusing a terminal: the agent has the most terminals it may have", "setting", c.p.o.Settings.MaxTerminals, "limit", limit)
	}
	return acp.ErrInvalidRequest.WithData(map[string]any{"reason": fmt.Sprintf(
		"you have %d terminals open, the most dshd lets a subagent have (its %s); release one with terminal/release", limit, c.p.o.Settings.MaxTerminals)})
}

// start runs cmd on its own goroutine until it ends or ctx ends, keeping
// the last limit bytes of its output; cut, when set, runs the first time
// bytes are dropped.
func (ts *terminals) start(ctx context.Context, runner tools.Runner, cmd tools.Command, limit int, cut func()) *terminal {
	ctx, cancel := context.WithCancel(ctx)
	ts.mu.Lock()
	ts.seq++
	t := &terminal{
		id:     acp.TerminalID("term-" + strconv.Itoa(ts.seq)),
		cancel: cancel,
		done:   make(chan struct{}),
		out:    tailBuffer{limit: limit, cut: cut},
	}
	if ts.byID == nil {
		ts.byID = map[acp.TerminalID]*terminal{}
	}
	ts.byID[t.id] = t
	ts.mu.Unlock()
	ts.wg.Go(func() {
		defer close(t.done)
		defer cancel()
		res, err := runner.Run(ctx, cmd, nil, func(chunk string) { t.out.Write([]byte(chunk)) })
		if res.Output != "" {
			// The result's output is the command's own tail: it holds
			// what a runner printed last, even one that streamed little.
			t.out.Replace(res.Output, res.Truncated)
		}
		if err != nil && res.ExitCode == nil && res.Signal == "" && !errors.Is(err, context.Canceled) {
			// It never ran: report it as a shell would.
			t.out.Write([]byte(runkit.Cut(err.Error(), 500) + "\n"))
			code := uint32(127)
			t.status.ExitCode = &code
			return
		}
		switch {
		case res.ExitCode != nil:
			code := uint32(*res.ExitCode)
			t.status.ExitCode = &code
		case res.Signal != "":
			sig := res.Signal
			t.status.Signal = &sig
		default:
			sig := "SIGKILL"
			t.status.Signal = &sig
		}
	})
	return t
}

func (ts *terminals) get(id acp.TerminalID) (*terminal, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if t := ts.byID[id]; t != nil {
		return t, nil
	}
	return nil, acp.ErrResourceNotFound.WithData(map[string]any{"terminalId": id, "reason": "unknown terminal"})
}

func (ts *terminals) output(id acp.TerminalID) (*acp.TerminalOutputResponse, error) {
	t, err := ts.get(id)
	if err != nil {
		return nil, err
	}
	resp := &acp.TerminalOutputResponse{Output: t.out.String(), Truncated: t.out.Truncated()}
	select {
	case <-t.done:
		st := t.status
		resp.ExitStatus = &st
	default:
	}
	return resp, nil
}

func (ts *terminals) wait(ctx context.Context, id acp.TerminalID) (*acp.TerminalExitStatus, error) {
	t, err := ts.get(id)
	if err != nil {
		return nil, err
	}
	select {
	case <-t.done:
		st := t.status
		return &st, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// kill stops the command; the terminal stays for its output.
func (ts *terminals) kill(id acp.TerminalID) error {
	t, err := ts.get(id)
	if err != nil {
		return err
	}
	t.cancel()
	return nil
}

// release stops the command and forgets the terminal.
func (ts *terminals) release(id acp.TerminalID) error {
	t, err := ts.get(id)
	if err != nil {
		return err
	}
	t.cancel()
	ts.mu.Lock()
	delete(ts.byID, id)
	ts.mu.Unlock()
	return nil
}

// closeAll stops every command and waits for them.
func (ts *terminals) closeAll() {
	ts.mu.Lock()
	for id, t := range ts.byID {
		t.cancel()
		delete(ts.byID, id)
	}
	ts.mu.Unlock()
	ts.wg.Wait()
}

// shellQuote quotes s as one shell word.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r == '+' || r == ',' || r == ':' || r == '@' || r == '=' ||
			r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
