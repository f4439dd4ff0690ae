// This file implements the glob tool.

package builtin

import (
	"context"
	_ "embed"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/dshd/dshd/internal/utf8cut"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/internal/choice"
	"github.com/dshd/dshd/tools/search"
)

// GlobName is the glob tool's name.
const GlobName = "glob"

// GlobParams are glob's arguments.
type GlobParams struct {
	Pattern string `json:"pattern" jsonschema:"The glob pattern, e.g. **/*.go or src/**/*.{ts,tsx}"`
	Path    string `json:"path,omitempty" jsonschema:"The directory to search in (default: the working directory)"`
}

// GlobOptions configures glob; the zero value is usable.
type GlobOptions struct {
	// MaxResults caps the paths returned; 0 means 1000.
	MaxResults int
	// Walk bounds the ignore files the walk reads (zero: its defaults).
	Walk search.Limits
}

//go:embed glob.md
var globDescription string

// globTool is glob's options, which its calls run with.
type globTool struct{ opts GlobOptions }

// NewGlob returns the glob tool; opts may be nil.
func NewGlob(opts *GlobOptions) tools.Tool {
	t := &globTool{opts: optionsOf(opts)}
	t.opts.MaxResults = choice.PositiveOr(t.opts.MaxResults, 1000)
	return newFileTool(tools.Static{ToolName: GlobName, ToolDescription: withMax(globDescription, t.opts.MaxResults), ToolKind: tools.KindSearch, Parallel: true,
		ToolTitle: tools.TitleOf(globTitle)}, t.run, reads("."))
}

// globTitle is "Find <pattern>", with the directory when one is given.
func globTitle(p GlobParams) string {
	if p.Pattern == "" {
		return "Find files"
	}
	title := "Find " + utf8cut.Line(p.Pattern, 80)
	if p.Path != "" {
		title += " in " + utf8cut.Line(p.Path, 80)
	}
	return title
}

func (t *globTool) run(ctx context.Context, call *tools.Call, p GlobParams) (*tools.Result, error) {
	if p.Pattern == "" {
		return tools.Errorf("pattern is required"), nil
	}
	pat, err := search.CompileGlob(filepath.ToSlash(p.Pattern))
	if err != nil {
		return tools.Errorf("bad pattern %q: %v", p.Pattern, err), nil
	}
	env, dir, res := dirOf(call, p.Path)
	if res != nil {
		return res, nil
	}
	w, prefix, err := newWalker(env, dir, t.opts.Walk)
	if err != nil {
		return tools.Errorf("cannot search %s: %v", env.Workspace.Display(dir), err), nil
	}
	defer w.Root.Close()
	kept := search.NewFirstK[string](t.opts.MaxResults)
	sub := func(rel string) string { return strings.TrimPrefix(rel[len(prefix):], "/") }
	w.EnterDir = func(rel string) bool {
		s := sub(rel)
		return pat.MayMatchBelow(s) && kept.WantsDir(s)
	}
	w.Visit = func(rel string, d fs.DirEntry, _ *search.Dir) {
		s := sub(rel)
		if pat.Match(s) {
			shown := env.Workspace.Display(filepath.Join(dir, filepath.FromSlash(s)))
			if d.IsDir() {
				shown += "/"
			}
			kept.Add(s, 1, shown)
		}
	}
	if err := w.Run(ctx); err != nil {
		return nil, err
	}
	items, capped := kept.Sorted()
	if len(items) == 0 {
		return withUnusedIgnores(&tools.Result{Output: fmt.Sprintf("No paths match %s in %s", p.Pattern, env.Workspace.Display(dir))}, env, w), nil
	}
	var b strings.Builder
	for _, it := range items {
		b.WriteString(it.V)
		b.WriteByte('\n')
	}
	summary := fmt.Sprintf("%d paths", len(items))
	if capped {
		fmt.Fprintf(&b, "\n[capped at %d paths; there may be more: narrow the pattern or the path]\n", t.opts.MaxResults)
		summary = fmt.Sprintf("%d paths (capped)", len(items))
	}
	return withUnusedIgnores(&tools.Result{Output: b.String(), Content: []tools.Content{tools.TextContent(summary)}}, env, w), nil
}

// dirOf resolves the directory a tool's path argument names in the call's
// workspace (the cwd when arg is empty) and checks that it is one: where
// a search starts, what list_dir lists, where a command runs. res is the
// model's answer when the path is refused or is no directory, or the call
// has no workspace.
func dirOf(call *tools.Call, arg string) (env *tools.Env, dir string, res *tools.Result) {
	env, res = envOf(call)
	if res != nil {
		return nil, "", res
	}
	if arg == "" {
		arg = "."
	}
	dir, err := env.Workspace.Resolve(arg)
	if err != nil {
		return nil, "", pathError(err)
	}
	fi, err := env.Workspace.Stat(dir)
	switch {
	case err != nil:
		return nil, "", tools.Errorf("%s: %v", env.Workspace.Display(dir), err)
	case !fi.IsDir():
		return nil, "", tools.Errorf("%s is not a directory", env.Workspace.Display(dir))
	}
	return env, dir, nil
}

// withUnusedIgnores adds to res the ignore files the walk w (nil: none)
// could not use (a FIFO, a device, one too large: internal/smallfile
// refuses them), so the model and the editor know their rules were not
// applied.
func withUnusedIgnores(res *tools.Result, env *tools.Env, w *search.Walker) *tools.Result {
	if w == nil {
		return res
	}
	var b strings.Builder
	for _, e := range w.IgnoreFileErrors() {
		fmt.Fprintf(&b, "[%s was not used, so its rules were not applied: %v]\n", env.Workspace.Display(filepath.Join(w.Root.Name(), filepath.FromSlash(e.Rel))), e.Err)
	}
	if b.Len() == 0 {
		return res
	}
	res.Output = strings.TrimRight(res.Output, "\n") + "\n\n" + b.String()
	if res.Content != nil {
		res.Content = append(res.Content, tools.TextContent(b.String()))
	}
	return res
}

// newWalker returns a walker over dir, confined to the root containing
// it, that reads the .gitignore files from that root down to dir within
// limits, and the slash path of dir relative to the root (the prefix of
// every path it reports). The caller closes the walker's Root.
func newWalker(env *tools.Env, dir string, limits search.Limits) (*search.Walker, string, error) {
	root, rel, err := env.Workspace.OpenRoot(dir)
	if err != nil {
		return nil, "", err
	}
	return &search.Walker{Root: root, Start: rel, Gitignore: true, Limits: limits}, rel, nil
}
