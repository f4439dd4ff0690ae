// This file holds fileTool, what the built-in file tools are: a typed
// tool that says which path its call reads or writes (tools.Accessor), so
// the agent keeps a read after a write of the same file in the model's
// order. run_command and plan go by their kind.

package builtin

import (
	"context"
	"encoding/json"

	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/workspace"
)

// fileTool is a built-in tool whose call reads or writes the file or
// directory its path argument names: read_file, list_dir, glob and grep
// read it, write_file and edit_file write it.
type fileTool[P any] struct {
	tools.Typed[P]
	touch touch
}

var _ tools.Accessor = (*fileTool[ReadFileParams])(nil)

// touch is how a file tool's call touches its path: read, with def
// standing for a missing one ("" for none: the call will fail), or
// written.
type touch struct {
	def   string
	write bool
}

// reads is the touch of a tool that reads its path, def when none is
// given.
func reads(def string) touch { return touch{def: def} }

// writes is the touch of a tool that writes its path.
var writes = touch{write: true}

// newFileTool returns the file tool of s and run that touches its path
// so.
func newFileTool[P any](s tools.Static, run func(ctx context.Context, call *tools.Call, p P) (*tools.Result, error), so touch) tools.Tool {
	return &fileTool[P]{tools.NewTyped(s, run), so}
}

// Access is the file or directory the call reads or writes.
func (t *fileTool[P]) Access(ws *workspace.Workspace, in json.RawMessage) tools.Access {
	p, ok := pathIn(ws, in, t.touch.def)
	switch {
	case !ok:
		return tools.Access{}
	case t.touch.write:
		return tools.Access{Writes: []string{p}}
	}
	return tools.Access{Reads: []string{p}}
}

// pathIn resolves the path argument of input as the call will ("" is
// def); ok is false when there is none to resolve (the call will fail).
func pathIn(ws *workspace.Workspace, input json.RawMessage, def string) (string, bool) {
	var in struct {
		Path string `json:"path"`
	}
	_ = json.Unmarshal(input, &in)
	if in.Path == "" {
		in.Path = def
	}
	if in.Path == "" {
		return "", false
	}
	p, err := ws.Resolve(in.Path)
	return p, err == nil
}
