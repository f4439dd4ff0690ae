// This file holds what every built-in tool shares: its static description,
// the permission round trip, and text helpers.

package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"
)

// toolBase implements the static half of [Tool], [Parallel] included.
type toolBase struct {
	name        string
	description string
	// schema is built on first use: reflecting over every tool's params
	// at construction would cost the daemon's cold start.
	schema   func() json.RawMessage
	kind     Kind
	parallel bool
}

func (b *toolBase) Name() string                 { return b.name }
func (b *toolBase) Description() string          { return b.description }
func (b *toolBase) InputSchema() json.RawMessage { return b.schema() }
func (b *toolBase) Kind() Kind                   { return b.kind }
func (b *toolBase) ParallelSafe() bool           { return b.parallel }

// permit asks call.Env's Permission about req. It returns nil when the
// call may go on; otherwise either the result the model should see (the
// user rejected it) or the error that ends the call (cancelled, or the gate
// failed). A nil Permission allows everything, as the agent loop does.
func permit(ctx context.Context, call *Call, req PermissionRequest) (*Result, error) {
	req.ToolCallID = call.ID
	if req.RawInput == nil && len(call.Input) > 0 {
		req.RawInput = call.Input
	}
	if call.Env == nil || call.Env.Permission == nil {
		return nil, nil
	}
	d, err := call.Env.Permission.Check(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	switch d {
	case Allowed:
		return nil, nil
	case Cancelled:
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, ErrCancelled
	}
	return Errorf("the user rejected this %s (%s); do not retry it as it is — ask the user or try something else", req.Effect, req.Title), nil
}

// envOf returns the call's environment, or an error result when the caller
// forgot one; tools need at least a Workspace.
func envOf(call *Call) (*Env, *Result) {
	if call.Env == nil || call.Env.Workspace == nil {
		return nil, Errorf("internal error: the tool has no workspace")
	}
	return call.Env, nil
}

// fsOf returns env's FileSystem, the local disk when none is set.
func fsOf(env *Env) FileSystem {
	if env.FS != nil {
		return env.FS
	}
	return defaultFS
}

var defaultFS = NewLocalFS()

// pathError is the model-facing text of a failed Resolve.
func pathError(err error) *Result {
	if errors.Is(err, ErrOutsideWorkspace) {
		return Errorf("%v; only files under the session's directories can be used", err)
	}
	return Errorf("%v", err)
}

// cutLine shortens s to at most n bytes at a character boundary, marking
// the cut.
func cutLine(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "… [line cut]"
}

// titlePath returns the "path" argument of a raw input for a title, or "".
func titleArg(input json.RawMessage, key string) string {
	var m map[string]any
	if json.Unmarshal(input, &m) != nil {
		return ""
	}
	s, _ := m[key].(string)
	return oneLine(s, 80)
}

// oneLine flattens s to its first line, at most n bytes.
func oneLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if len(s) > n {
		i := n
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s = s[:i] + "…"
	}
	return s
}

// countLines returns the number of lines of s, a last line without a
// newline included.
func countLines(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}
