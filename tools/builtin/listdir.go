// This file implements the list_dir tool.

package builtin

import (
	"context"
	_ "embed"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/internal/choice"
)

// ListDirName is the list_dir tool's name.
const ListDirName = "list_dir"

// ListDirParams are list_dir's arguments.
type ListDirParams struct {
	Path string `json:"path,omitempty" jsonschema:"The directory to list (default: the working directory)"`
}

// ListDirOptions configures list_dir; the zero value is usable.
type ListDirOptions struct {
	// MaxEntries caps the entries listed; 0 means 1000.
	MaxEntries int
}

//go:embed listdir.md
var listDirDescription string

// listDir is list_dir's options, which its calls run with.
type listDir struct{ opts ListDirOptions }

// NewListDir returns the list_dir tool, titled "List <path>"; opts may be
// nil.
func NewListDir(opts *ListDirOptions) tools.Tool {
	t := &listDir{opts: optionsOf(opts)}
	t.opts.MaxEntries = choice.PositiveOr(t.opts.MaxEntries, 1000)
	return newFileTool(tools.Static{ToolName: ListDirName, ToolDescription: withMax(listDirDescription, t.opts.MaxEntries), ToolKind: tools.KindRead, Parallel: true,
		ToolTitle: argTitle("path", "List ", "List directory")}, t.run, reads("."))
}

func (t *listDir) run(ctx context.Context, call *tools.Call, p ListDirParams) (*tools.Result, error) {
	env, dir, res := dirOf(call, p.Path)
	if res != nil {
		return res, nil
	}
	d, err := env.Workspace.OpenDir(dir)
	if err != nil {
		return tools.Errorf("cannot list %s: %v", env.Workspace.Display(dir), err), nil
	}
	defer d.Close()
	entries, err := readDir(d)
	if err != nil && len(entries) == 0 {
		return tools.Errorf("cannot list %s: %v", env.Workspace.Display(dir), err), nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	shown := env.Workspace.Display(dir)
	if len(entries) == 0 {
		return &tools.Result{Output: shown + " is empty", Locations: []tools.Location{{Path: dir}}}, nil
	}
	var b strings.Builder
	ndirs, nfiles := 0, 0
	for i, e := range entries {
		if i == t.opts.MaxEntries {
			fmt.Fprintf(&b, "\n[%d more entries not shown; use glob to narrow down]\n", len(entries)-i)
			break
		}
		name := e.Name()
		switch {
		case e.IsDir():
			ndirs++
			b.WriteString(name + "/\n")
		case e.Type()&fs.ModeSymlink != 0:
			nfiles++
			target, _ := d.Readlink(name)
			b.WriteString(name + " -> " + target + "\n")
		default:
			nfiles++
			if info, err := d.Lstat(name); err == nil && info.Mode().IsRegular() {
				fmt.Fprintf(&b, "%s  %s\n", name, humanSize(info.Size()))
			} else {
				b.WriteString(name + "\n")
			}
		}
	}
	summary := fmt.Sprintf("%s: %d directories, %d files", shown, ndirs, nfiles)
	return &tools.Result{Output: b.String(), Content: []tools.Content{tools.TextContent(summary)}, Locations: []tools.Location{{Path: dir}}}, nil
}

// readDir lists the directory d; the entries' Info would look them up by
// path, so they are described through d instead.
func readDir(d *os.Root) ([]fs.DirEntry, error) {
	f, err := d.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// humanSize formats a byte count the way ls -h does, roughly.
func humanSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %cB", float64(n)/float64(div), "KMGTPE"[exp])
}
