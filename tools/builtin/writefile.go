// This file implements the write_file tool.

package builtin

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/dshd/dshd/tools"
)

// WriteFileName is the write_file tool's name.
const WriteFileName = "write_file"

// WriteFileParams are write_file's arguments.
type WriteFileParams struct {
	Path    string `json:"path" jsonschema:"The file to write: relative to the working directory, or absolute"`
	Content string `json:"content" jsonschema:"The complete new content of the file"`
}

//go:embed writefile.md
var writeFileDescription string

// NewWriteFile returns the write_file tool, titled "Write <path>".
func NewWriteFile() tools.Tool {
	return newFileTool(tools.Static{ToolName: WriteFileName, ToolDescription: writeFileDescription, ToolKind: tools.KindEdit,
		ToolTitle: argTitle("path", "Write ", "Write file")}, writeFile, writes)
}

func writeFile(ctx context.Context, call *tools.Call, p WriteFileParams) (*tools.Result, error) {
	env, path, file, res := targetOf(call, p.Path)
	if res != nil {
		return res, nil
	}
	defer file.Close()
	old, res, err := readOld(ctx, env, path, file, "replace with write_file")
	if res != nil || err != nil {
		return res, err
	}
	shown := env.Workspace.Display(path)
	if old != nil && *old == p.Content {
		return &tools.Result{Output: shown + " already has this content; nothing written", Locations: []tools.Location{{Path: path}}}, nil
	}
	verb := "Write"
	if old == nil {
		verb = "Create"
	}
	c := &change{title: verb + " " + shown, path: path, shown: shown, old: old, text: p.Content}
	if res, err := c.commit(ctx, call, WriteFileName, file); res != nil || err != nil {
		return res, err
	}
	done := "Wrote"
	if old == nil {
		done = "Created"
	}
	out := fmt.Sprintf("%s %s (%s, %s)", done, shown, plural(countLines(p.Content), "line"), plural(len(p.Content), "byte"))
	return c.result(out), nil
}

// plural is "1 line", "2 lines", "0 lines".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
