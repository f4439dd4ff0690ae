// This file holds what every built-in tool shares besides its static half
// (tools.Static): options, the permission round trip, the title rule of
// the tools named by one argument, and text helpers.

package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/dshd/dshd/internal/utf8cut"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/permission"
	"github.com/dshd/dshd/tools/workspace"
)

// optionsOf is a copy of a constructor's options, the zero value when
// opts is nil: the tool keeps its own, so the caller may change theirs.
func optionsOf[O any](opts *O) O {
	if opts == nil {
		var zero O
		return zero
	}
	return *opts
}

// withMax is a tool's description with its limit in place of {{max}}.
func withMax(description string, n int) string {
	return strings.ReplaceAll(description, "{{max}}", strconv.Itoa(n))
}

// permit asks the call's permission gate about req: permission.Check,
// what was rejected worded "this edit (Create a.txt)". A nil Permission
// allows everything, as the agent loop does.
func permit(ctx context.Context, call *tools.Call, req tools.PermissionRequest) (*tools.Result, error) {
	return permission.Check(ctx, call, req, fmt.Sprintf("this %s (%s)", req.Effect, req.Title))
}

// envOf returns the call's environment, or an error result when the caller
// forgot one; tools need at least a Workspace.
func envOf(call *tools.Call) (*tools.Env, *tools.Result) {
	if call.Env == nil || call.Env.Workspace == nil {
		return nil, tools.Errorf("internal error: the tool has no workspace")
	}
	return call.Env, nil
}

// fsOf returns env's FileSystem, the local disk when none is set.
func fsOf(env *tools.Env) tools.FileSystem {
	if env.FS != nil {
		return env.FS
	}
	return workspace.NewLocalFS(env.Workspace)
}

// pathError is the model-facing text of a failed Resolve.
func pathError(err error) *tools.Result {
	if errors.Is(err, workspace.ErrOutside) {
		return tools.Errorf("%v; only files under the session's directories can be used", err)
	}
	return tools.Errorf("%v", err)
}

// argTitle is the title rule (tools.Static.ToolTitle) of a tool whose
// calls are named by one argument: prefix and the key argument on one
// line, or fallback when there is none. The argument is read from the raw
// input, not the params struct, so a call whose other arguments are
// wrong is still named by it.
func argTitle(key, prefix, fallback string) func(input json.RawMessage) string {
	return func(input json.RawMessage) string {
		var m map[string]any
		if json.Unmarshal(input, &m) != nil {
			return fallback
		}
		s, _ := m[key].(string)
		if s = utf8cut.Line(s, 80); s == "" {
			return fallback
		}
		return prefix + s
	}
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
