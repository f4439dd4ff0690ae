// This file holds ready-made client-side handlers: permission answers,
// fs/* against the real file system, and terminal/* that really run the
// commands.

package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"sync"
)

// PermissionAnswer picks an option of the given kind ("allow_once",
// "reject_once", ...), or answers cancelled when kind is "cancelled".
func PermissionAnswer(kind string) Handler {
	return func(ctx context.Context, c *Client, req *Msg) (any, *RPCError) {
		return permissionOutcome(req, kind), nil
	}
}

func permissionOutcome(req *Msg, kind string) any {
	if kind == "cancelled" {
		return map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}
	}
	for _, o := range getArray(req.Params, "options") {
		if getString(o, "kind") == kind {
			return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": getString(o, "optionId")}}
		}
	}
	return map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}
}

// declineOutcome picks the first reject option of a permission request,
// else its first option.
func declineOutcome(req *Msg) any {
	opts := getArray(req.Params, "options")
	for _, kind := range []string{"reject_once", "reject_always"} {
		for _, o := range opts {
			if getString(o, "kind") == kind {
				return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": getString(o, "optionId")}}
			}
		}
	}
	if len(opts) > 0 {
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": getString(opts[0], "optionId")}}
	}
	return map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}
}

// ErrorHandler answers every request with err.
func ErrorHandler(err *RPCError) Handler {
	return func(context.Context, *Client, *Msg) (any, *RPCError) { return nil, err }
}

// errRequestCancelled is the -32800 answer.
var errRequestCancelled = &RPCError{Code: -32800, Message: "Request cancelled"}

// FSOptions shape the fs handlers.
type FSOptions struct {
	// NullWriteResult answers fs/write_text_file with null instead of {}.
	NullWriteResult bool
}

// FSHandlers serve fs/read_text_file and fs/write_text_file on the real
// file system, like an editor with no unsaved buffers.
func FSHandlers(o FSOptions) map[string]Handler {
	return map[string]Handler{
		"fs/read_text_file": func(ctx context.Context, c *Client, req *Msg) (any, *RPCError) {
			b, err := os.ReadFile(getString(req.Params, "path"))
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil, &RPCError{Code: -32002, Message: "Resource not found", Data: mustJSON(map[string]string{"uri": "file://" + getString(req.Params, "path")})}
				}
				return nil, &RPCError{Code: -32603, Message: "Internal error", Data: mustJSON(err.Error())}
			}
			text := string(b)
			var line, limit int
			_ = json.Unmarshal(get(req.Params, "line"), &line)
			_ = json.Unmarshal(get(req.Params, "limit"), &limit)
			if line > 1 || limit > 0 {
				lines := strings.SplitAfter(text, "\n")
				from := min(max(line-1, 0), len(lines))
				lines = lines[from:]
				if limit > 0 && limit < len(lines) {
					lines = lines[:limit]
				}
				text = strings.Join(lines, "")
			}
			return map[string]any{"content": text}, nil
		},
		"fs/write_text_file": func(ctx context.Context, c *Client, req *Msg) (any, *RPCError) {
			if err := os.WriteFile(getString(req.Params, "path"), []byte(getString(req.Params, "content")), 0o644); err != nil {
				return nil, &RPCError{Code: -32603, Message: "Internal error", Data: mustJSON(err.Error())}
			}
			if o.NullWriteResult {
				return json.RawMessage("null"), nil
			}
			return map[string]any{}, nil
		},
	}
}

// Terminals runs terminal/* requests as real processes.
type Terminals struct {
	// NullResults answers terminal/kill and terminal/release with null.
	NullResults bool

	mu    sync.Mutex
	next  int
	terms map[string]*term
	// Created records every terminal/create's params, in order.
	Created []json.RawMessage
}

type term struct {
	cmd      *exec.Cmd
	out      *tailBuffer
	limit    int
	done     chan struct{}
	released bool
}

// Handlers returns the five terminal/* handlers.
func (ts *Terminals) Handlers() map[string]Handler {
	lookup := func(req *Msg) (*term, *RPCError) {
		ts.mu.Lock()
		defer ts.mu.Unlock()
		t := ts.terms[getString(req.Params, "terminalId")]
		if t == nil || t.released {
			return nil, &RPCError{Code: -32002, Message: "Resource not found", Data: mustJSON(map[string]string{"terminalId": getString(req.Params, "terminalId")})}
		}
		return t, nil
	}
	empty := func() any {
		if ts.NullResults {
			return json.RawMessage("null")
		}
		return map[string]any{}
	}
	return map[string]Handler{
		"terminal/create": func(ctx context.Context, c *Client, req *Msg) (any, *RPCError) {
			p := req.Params
			var args []string
			_ = json.Unmarshal(get(p, "args"), &args)
			cmd := exec.Command(getString(p, "command"), args...)
			cmd.Dir = getString(p, "cwd")
			cmd.Env = os.Environ()
			for _, e := range getArray(p, "env") {
				cmd.Env = append(cmd.Env, getString(e, "name")+"="+getString(e, "value"))
			}
			setProcessGroup(cmd)
			t := &term{cmd: cmd, out: &tailBuffer{max: 1 << 20}, done: make(chan struct{})}
			_ = json.Unmarshal(get(p, "outputByteLimit"), &t.limit)
			cmd.Stdout, cmd.Stderr = t.out, t.out
			if err := cmd.Start(); err != nil {
				return nil, &RPCError{Code: -32603, Message: "Internal error", Data: mustJSON(err.Error())}
			}
			go func() { _ = cmd.Wait(); close(t.done) }()
			ts.mu.Lock()
			defer ts.mu.Unlock()
			if ts.terms == nil {
				ts.terms = map[string]*term{}
			}
			ts.next++
			id := fmt.Sprintf("term-%d", ts.next)
			ts.terms[id] = t
			ts.Created = append(ts.Created, p)
			return map[string]any{"terminalId": id}, nil
		},
		"terminal/output": func(ctx context.Context, c *Client, req *Msg) (any, *RPCError) {
			t, e := lookup(req)
			if e != nil {
				return nil, e
			}
			out := t.out.String()
			truncated := false
			if t.limit > 0 && len(out) > t.limit {
				out, truncated = out[len(out)-t.limit:], true
				for len(out) > 0 && !utf8Start(out[0]) {
					out = out[1:]
				}
			}
			res := map[string]any{"output": out, "truncated": truncated}
			select {
			case <-t.done:
				res["exitStatus"] = exitStatus(t.cmd)
			default:
			}
			return res, nil
		},
		"terminal/wait_for_exit": func(ctx context.Context, c *Client, req *Msg) (any, *RPCError) {
			t, e := lookup(req)
			if e != nil {
				return nil, e
			}
			select {
			case <-t.done:
				return exitStatus(t.cmd), nil
			case <-ctx.Done():
				return nil, errRequestCancelled
			}
		},
		"terminal/kill": func(ctx context.Context, c *Client, req *Msg) (any, *RPCError) {
			t, e := lookup(req)
			if e != nil {
				return nil, e
			}
			killProcessGroup(t.cmd)
			return empty(), nil
		},
		"terminal/release": func(ctx context.Context, c *Client, req *Msg) (any, *RPCError) {
			t, e := lookup(req)
			if e != nil {
				return nil, e
			}
			killProcessGroup(t.cmd)
			ts.mu.Lock()
			t.released = true
			ts.mu.Unlock()
			return empty(), nil
		},
	}
}

// Close kills every terminal still running.
func (ts *Terminals) Close() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, t := range ts.terms {
		killProcessGroup(t.cmd)
	}
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// Caps builds clientCapabilities: fs read/write, terminal, subagents.
type Caps struct {
	Read, Write, Terminal, Subagents bool
}

// JSON renders the capabilities object.
func (c Caps) JSON() map[string]any {
	m := map[string]any{}
	if c.Read || c.Write {
		m["fs"] = map[string]any{"readTextFile": c.Read, "writeTextFile": c.Write}
	}
	if c.Terminal {
		m["terminal"] = true
	}
	if c.Subagents {
		m["subagents"] = map[string]any{}
	}
	return m
}
