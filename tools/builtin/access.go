// This file says which paths each built-in file tool's call reads or
// writes (tools.Accessor), so the agent keeps a read after a write of the
// same file in the model's order. run_command and plan go by their kind.

package builtin

import (
	"encoding/json"

	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/workspace"
)

var (
	_ tools.Accessor = (*readFile)(nil)
	_ tools.Accessor = (*listDir)(nil)
	_ tools.Accessor = (*globTool)(nil)
	_ tools.Accessor = (*grepTool)(nil)
	_ tools.Accessor = (*writeFile)(nil)
	_ tools.Accessor = (*editFile)(nil)
)

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

func reads(ws *workspace.Workspace, input json.RawMessage, def string) tools.Access {
	if p, ok := pathIn(ws, input, def); ok {
		return tools.Access{Reads: []string{p}}
	}
	return tools.Access{}
}

func writes(ws *workspace.Workspace, input json.RawMessage) tools.Access {
	if p, ok := pathIn(ws, input, ""); ok {
		return tools.Access{Writes: []string{p}}
	}
	return tools.Access{}
}

// Access is the file read.
func (t *readFile) Access(ws *workspace.Workspace, in json.RawMessage) tools.Access {
	return reads(ws, in, "")
}

// Access is the directory listed.
func (t *listDir) Access(ws *workspace.Workspace, in json.RawMessage) tools.Access {
	return reads(ws, in, ".")
}

// Access is the directory searched.
func (t *globTool) Access(ws *workspace.Workspace, in json.RawMessage) tools.Access {
	return reads(ws, in, ".")
}

// Access is the file or directory searched.
func (t *grepTool) Access(ws *workspace.Workspace, in json.RawMessage) tools.Access {
	return reads(ws, in, ".")
}

// Access is the file written.
func (t *writeFile) Access(ws *workspace.Workspace, in json.RawMessage) tools.Access {
	return writes(ws, in)
}

// Access is the file edited.
func (t *editFile) Access(ws *workspace.Workspace, in json.RawMessage) tools.Access {
	return writes(ws, in)
}
