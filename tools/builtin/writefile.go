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

// writeFile runs a call of write_file.
func writeFile(ctx context.Context, call *tools.Call, p WriteFileParams) (*tools.Result, error) {
	return rewrite(ctx, call, WriteFileName, p.Path, "replace with write_file", func(c *change) (string, *tools.Result) {
		if c.old != nil && *c.old == p.Content {
			return "", &tools.Result{Output: c.shown + " already has this content; nothing written", Locations: []tools.Location{{Path: c.path}}}
		}
		c.title, c.text = "Write "+c.shown, p.Content
		done := "Wrote"
		if c.old == nil {
			c.title, done = "Create "+c.shown, "Created"
		}
		return fmt.Sprintf("%s %s (%s, %s)", done, c.shown, plural(countLines(p.Content), "line"), plural(len(p.Content), "byte")), nil
	})
}

// plural is "1 line", "2 lines", "0 lines".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
