// This file drives agent processes over stdio with a minimal line-based
// JSON-RPC client, so dshd and any other agent are measured the same way.

package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dshd/dshd/conformance/internal/piped"
)

// callTimeout bounds one call to an agent process.
const callTimeout = 30 * time.Second

// rpc is a sequential JSON-RPC client over a line stream.
type rpc struct {
	w      io.Writer
	r      *bufio.Reader
	nextID int
	// abort unblocks a call that hangs (kills the process, closes the
	// socket).
	abort func()
}

func newRPC(r io.Reader, w io.Writer, abort func()) *rpc {
	return &rpc{w: w, r: bufio.NewReaderSize(r, 1<<20), abort: abort}
}

// agentProc is an agent process on stdio.
type agentProc struct {
	*rpc
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

// startAgent starts argv with pipes on stdin and stdout; stderr is discarded.
func startAgent(argv []string, env []string) (*agentProc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stderr = io.Discard
	in, out, err := piped.Start(cmd)
	if err != nil {
		return nil, err
	}
	p := &agentProc{cmd: cmd, in: in}
	p.rpc = newRPC(out, in, func() { _ = cmd.Process.Kill() })
	p.out = p.rpc.r
	return p, nil
}

// wireMsg is the part of an incoming message the client looks at.
type wireMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// call sends a request and reads until its response, counting the
// notifications on the way. Requests from the agent are answered with an
// error (the bench client offers no capabilities).
func (p *rpc) call(method string, params any) (json.RawMessage, int, error) {
	p.nextID++
	id := strconv.Itoa(p.nextID)
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": p.nextID, "method": method, "params": params})
	if err != nil {
		return nil, 0, err
	}
	if _, err := p.w.Write(append(b, '\n')); err != nil {
		return nil, 0, err
	}
	timer := time.AfterFunc(callTimeout, p.abort)
	defer timer.Stop()
	notes := 0
	for {
		line, err := p.r.ReadBytes('\n')
		if err != nil {
			return nil, notes, fmt.Errorf("%s: %w", method, err)
		}
		var m wireMsg
		if err := json.Unmarshal(line, &m); err != nil {
			return nil, notes, fmt.Errorf("%s: bad line %.100q: %w", method, line, err)
		}
		switch {
		case m.Method != "" && m.ID == nil:
			notes++
		case m.Method != "":
			reply, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "Method not found"}})
			if _, err := p.w.Write(append(reply, '\n')); err != nil {
				return nil, notes, err
			}
		case string(m.ID) == id:
			if m.Error != nil {
				return nil, notes, fmt.Errorf("%s: %d %s", method, m.Error.Code, m.Error.Message)
			}
			return m.Result, notes, nil
		}
	}
}

// initialize runs the handshake.
func (p *rpc) initialize() error {
	_, _, err := p.call("initialize", map[string]any{
		"protocolVersion":    1,
		"clientCapabilities": map[string]any{},
		"clientInfo":         map[string]any{"name": "dshd-bench", "version": "1"},
	})
	return err
}

// newSession creates a session in cwd.
func (p *rpc) newSession(cwd string) (string, error) {
	raw, _, err := p.call("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}})
	if err != nil {
		return "", err
	}
	var res struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || res.SessionID == "" {
		return "", fmt.Errorf("session/new: no sessionId in %s", raw)
	}
	return res.SessionID, nil
}

// prompt runs one turn and returns its stop reason and update count.
func (p *rpc) prompt(sid, text string) (string, int, error) {
	raw, notes, err := p.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": text}}})
	if err != nil {
		return "", notes, err
	}
	var res struct {
		StopReason string `json:"stopReason"`
	}
	_ = json.Unmarshal(raw, &res)
	return res.StopReason, notes, nil
}

// hwmKB reads the process's peak resident set (VmHWM) so far, in KiB.
func (p *agentProc) hwmKB() int64 { return procStatusKB(p.cmd.Process.Pid, "VmHWM:") }

func procStatusKB(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n
			}
		}
	}
	return 0
}

// close ends the process politely (stdin EOF, then SIGTERM, then SIGKILL)
// and returns its peak RSS in KiB from wait4's rusage.
func (p *agentProc) close() (int64, error) {
	_ = p.in.Close()
	done := make(chan error, 1)
	go func() {
		_, _ = io.Copy(io.Discard, p.out)
		done <- p.cmd.Wait()
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err = <-done:
		case <-time.After(5 * time.Second):
			_ = p.cmd.Process.Kill()
			err = <-done
		}
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return 0, err
	}
	return maxRSSKB(p.cmd.ProcessState), nil
}
