// This file implements the read_file tool.

package builtin

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"

	"github.com/dshd/dshd/internal/utf8cut"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/internal/choice"
	"github.com/dshd/dshd/tools/search"
	"github.com/dshd/dshd/tools/workspace"
)

// ReadFileName is the read_file tool's name.
const ReadFileName = "read_file"

// ReadFileParams are read_file's arguments.
type ReadFileParams struct {
	Path   string `json:"path" jsonschema:"The file to read: relative to the working directory, or absolute"`
	Offset int    `json:"offset,omitempty" jsonschema:"The 1-based line to start reading at (default 1)"`
	Limit  int    `json:"limit,omitempty" jsonschema:"How many lines to read (default and maximum set by the tool)"`
}

// ReadFileOptions configures read_file; the zero value is usable.
type ReadFileOptions struct {
	// Limit is the number of lines read when the call gives none; 0 means
	// 2000. A call may not ask for more than MaxLimit (0 means 10 × Limit).
	Limit    int
	MaxLimit int
	// MaxLineLength cuts longer lines; 0 means 2000 bytes.
	MaxLineLength int
	// MaxOutputBytes cuts the output at a line boundary; 0 means 256 KiB.
	MaxOutputBytes int
}

//go:embed readfile.md
var readFileDescription string

// readFile is read_file's options, which its calls run with.
type readFile struct{ opts ReadFileOptions }

// NewReadFile returns the read_file tool; opts may be nil.
func NewReadFile(opts *ReadFileOptions) tools.Tool {
	t := &readFile{opts: optionsOf(opts)}
	t.opts.Limit = choice.PositiveOr(t.opts.Limit, 2000)
	t.opts.MaxLimit = choice.PositiveOr(t.opts.MaxLimit, 10*t.opts.Limit)
	t.opts.MaxLineLength = choice.PositiveOr(t.opts.MaxLineLength, 2000)
	t.opts.MaxOutputBytes = choice.PositiveOr(t.opts.MaxOutputBytes, 256<<10)
	desc := strings.NewReplacer("{{limit}}", strconv.Itoa(t.opts.Limit), "{{line}}", strconv.Itoa(t.opts.MaxLineLength)).Replace(readFileDescription)
	return newFileTool(tools.Static{ToolName: ReadFileName, ToolDescription: desc, ToolKind: tools.KindRead, Parallel: true,
		ToolTitle: tools.TitleOf(readFileTitle)}, t.run, reads(""))
}

// readFileTitle is "Read <path>", with the line window when one is given.
func readFileTitle(p ReadFileParams) string {
	if p.Path == "" {
		return "Read file"
	}
	title := "Read " + utf8cut.Line(p.Path, 80)
	switch {
	case p.Offset > 1 && p.Limit > 0:
		title += fmt.Sprintf(" (lines %d-%d)", p.Offset, p.Offset+p.Limit-1)
	case p.Offset > 1:
		title += fmt.Sprintf(" (from line %d)", p.Offset)
	case p.Limit > 0:
		title += fmt.Sprintf(" (lines 1-%d)", p.Limit)
	}
	return title
}

func (t *readFile) run(ctx context.Context, call *tools.Call, p ReadFileParams) (*tools.Result, error) {
	if p.Offset < 0 || p.Limit < 0 {
		return tools.Errorf("offset and limit must not be negative"), nil
	}
	env, path, res := fileOf(call, p.Path)
	if res != nil {
		return res, nil
	}
	offset := max(p.Offset, 1)
	limit := p.Limit
	if limit == 0 {
		limit = t.opts.Limit
	}
	limit = min(limit, t.opts.MaxLimit)
	text, err := fsOf(env).ReadTextFile(ctx, path, offset, limit)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return readError(env, path, err), nil
	}
	shown := env.Workspace.Display(path)
	loc := []tools.Location{{Path: path, Line: offset}}
	if strings.IndexByte(text[:min(len(text), 8<<10)], 0) >= 0 {
		return &tools.Result{Output: shown + " is a binary file; read_file shows text only", IsError: true, Locations: loc}, nil
	}
	if text == "" {
		out := shown + " is empty"
		if offset > 1 {
			out = fmt.Sprintf("%s has fewer than %d lines", shown, offset)
		}
		return &tools.Result{Output: out, Locations: loc}, nil
	}

	var b strings.Builder
	b.Grow(min(len(text)+len(text)/4+64, t.opts.MaxOutputBytes+256))
	n := offset
	cut := false
	returned := 0
	var num []byte
	for rest := text; rest != ""; {
		l, after, _ := strings.Cut(rest, "\n")
		rest = after
		returned++
		l = search.CutLine(strings.TrimSuffix(l, "\r"), t.opts.MaxLineLength)
		num = strconv.AppendInt(num[:0], int64(n), 10)
		if b.Len()+len(l)+len(num)+8 > t.opts.MaxOutputBytes && b.Len() > 0 {
			cut = true
			break
		}
		for range 6 - len(num) {
			b.WriteByte(' ')
		}
		b.Write(num)
		b.WriteByte('\t')
		b.WriteString(l)
		b.WriteByte('\n')
		n++
	}
	last := n - 1
	switch {
	case cut:
		fmt.Fprintf(&b, "\n[output cut at line %d to stay under %d bytes; continue with offset=%d]\n", last, t.opts.MaxOutputBytes, n)
	case returned == limit:
		fmt.Fprintf(&b, "\n[showing lines %d-%d; the file may go on: continue with offset=%d]\n", offset, last, n)
	}
	return &tools.Result{
		Output:    b.String(),
		Locations: loc,
		Content:   []tools.Content{tools.TextContent(fmt.Sprintf("%s: lines %d-%d", shown, offset, last))},
		Title:     fmt.Sprintf("Read %s (lines %d-%d)", shown, offset, last),
	}, nil
}

// readError words a failed read for the model.
func readError(env *tools.Env, path string, err error) *tools.Result {
	shown := env.Workspace.Display(path)
	switch {
	case errors.Is(err, tools.ErrNotExist):
		return tools.Errorf("%s does not exist", shown)
	case errors.Is(err, workspace.ErrTooLarge):
		return tools.Errorf("%s: the requested lines are too large to read at once; ask for fewer lines with offset and limit", shown)
	case errors.Is(err, syscall.EISDIR):
		return tools.Errorf("%s is a directory; use list_dir to see what it holds", shown)
	}
	return tools.Errorf("cannot read %s: %v", shown, err)
}
