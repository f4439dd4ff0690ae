// This file implements the grep tool.

package builtin

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/dshd/dshd/internal/utf8cut"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/internal/choice"
	"github.com/dshd/dshd/tools/search"
)

// GrepName is the grep tool's name.
const GrepName = "grep"

// GrepParams are grep's arguments.
type GrepParams struct {
	Pattern    string `json:"pattern" jsonschema:"The regular expression to search for (Go RE2 syntax)"`
	Path       string `json:"path,omitempty" jsonschema:"The file or directory to search (default: the working directory)"`
	Include    string `json:"include,omitempty" jsonschema:"Only search files matching this glob, e.g. *.go or src/**/*.{ts,tsx}"`
	IgnoreCase bool   `json:"ignore_case,omitempty" jsonschema:"Match case-insensitively"`
	Context    int    `json:"context,omitempty" jsonschema:"Lines of context to show before and after each match"`
	Before     int    `json:"before,omitempty" jsonschema:"Lines of context to show before each match (overrides context)"`
	After      int    `json:"after,omitempty" jsonschema:"Lines of context to show after each match (overrides context)"`
	MaxMatches int    `json:"max_matches,omitempty" jsonschema:"Show at most this many matches"`
}

// GrepOptions configures grep; the zero value is usable.
type GrepOptions struct {
	// MaxMatches caps the matches shown; 0 means 200.
	MaxMatches int
	// MaxContext caps the context lines on each side; 0 means 20.
	MaxContext int
	// MaxLineLength cuts longer output lines; 0 means 500 bytes.
	MaxLineLength int
	// MaxOutputBytes caps the output; 0 means 64 KiB.
	MaxOutputBytes int
	// Workers is the number of goroutines walking and searching; 0 means
	// twice GOMAXPROCS (between 4 and 32).
	Workers int
	// Walk bounds the ignore files the walk reads (zero: its defaults).
	Walk search.Limits
}

//go:embed grep.md
var grepDescription string

// grepTool is grep's options, which its calls run with.
type grepTool struct{ opts GrepOptions }

// NewGrep returns the grep tool; opts may be nil.
func NewGrep(opts *GrepOptions) tools.Tool {
	t := &grepTool{opts: optionsOf(opts)}
	t.opts.MaxMatches = choice.PositiveOr(t.opts.MaxMatches, 200)
	t.opts.MaxContext = choice.PositiveOr(t.opts.MaxContext, 20)
	t.opts.MaxLineLength = choice.PositiveOr(t.opts.MaxLineLength, 500)
	t.opts.MaxOutputBytes = choice.PositiveOr(t.opts.MaxOutputBytes, 64<<10)
	return newFileTool(tools.Static{ToolName: GrepName, ToolDescription: withMax(grepDescription, t.opts.MaxMatches), ToolKind: tools.KindSearch, Parallel: true,
		ToolTitle: tools.TitleOf(grepTitle)}, t.run, reads("."))
}

// grepTitle is "Search <pattern>", with the path and filter when given.
func grepTitle(p GrepParams) string {
	if p.Pattern == "" {
		return "Search files"
	}
	title := "Search " + strconv.Quote(utf8cut.Line(p.Pattern, 80))
	if p.Path != "" {
		title += " in " + utf8cut.Line(p.Path, 80)
	}
	if p.Include != "" {
		title += " (" + utf8cut.Line(p.Include, 40) + ")"
	}
	return title
}

// grepFile is one file's hits, as the search keeps them.
type grepFile struct {
	shown string
	hits  search.Hits
}

func (t *grepTool) run(ctx context.Context, call *tools.Call, p GrepParams) (*tools.Result, error) {
	if p.Pattern == "" {
		return tools.Errorf("pattern is required"), nil
	}
	if p.Context < 0 || p.Before < 0 || p.After < 0 || p.MaxMatches < 0 {
		return tools.Errorf("context, before, after and max_matches must not be negative"), nil
	}
	env, res := envOf(call)
	if res != nil {
		return res, nil
	}
	flags := "(?m)"
	if p.IgnoreCase {
		flags = "(?mi)"
	}
	re, err := regexp.Compile(flags + p.Pattern)
	if err != nil {
		return tools.Errorf("bad pattern: %v", strings.TrimPrefix(err.Error(), "error parsing regexp: ")), nil
	}
	var include *search.Glob
	includeBase := false
	if p.Include != "" {
		if include, err = search.CompileGlob(filepath.ToSlash(p.Include)); err != nil {
			return tools.Errorf("bad include glob %q: %v", p.Include, err), nil
		}
		includeBase = !strings.Contains(p.Include, "/")
	}
	before, after := p.Context, p.Context
	if p.Before > 0 {
		before = p.Before
	}
	if p.After > 0 {
		after = p.After
	}
	before, after = min(before, t.opts.MaxContext), min(after, t.opts.MaxContext)
	maxMatches := t.opts.MaxMatches
	if p.MaxMatches > 0 {
		maxMatches = min(p.MaxMatches, maxMatches)
	}
	s := &search.Grep{Re: re, Before: before, After: after, MaxMatches: maxMatches, MaxLine: t.opts.MaxLineLength, MaxLineBytes: 16 << 20}

	target := p.Path
	if target == "" {
		target = "."
	}
	resolved, err := env.Workspace.Resolve(target)
	if err != nil {
		return pathError(err), nil
	}
	fi, err := env.Workspace.Stat(resolved)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return tools.Errorf("%s does not exist", env.Workspace.Display(resolved)), nil
		}
		return tools.Errorf("%s: %v", env.Workspace.Display(resolved), err), nil
	}
	kept := search.NewFirstK[grepFile](maxMatches)
	var walked *search.Walker // nil for a single file
	if !fi.IsDir() {
		hits, res := grepOne(env, s, resolved)
		if res != nil {
			return res, nil
		}
		if hits.Matches > 0 {
			kept.Add("", hits.Matches, grepFile{env.Workspace.Display(resolved), hits})
		}
	} else {
		w, prefix, err := newWalker(env, resolved, t.opts.Walk)
		if err != nil {
			return tools.Errorf("cannot search %s: %v", env.Workspace.Display(resolved), err), nil
		}
		defer w.Root.Close()
		w.Workers = t.opts.Workers
		sub := func(rel string) string { return strings.TrimPrefix(rel[len(prefix):], "/") }
		w.EnterDir = func(rel string) bool {
			s := sub(rel)
			if include != nil && !includeBase && !include.MayMatchBelow(s) {
				return false
			}
			return kept.WantsDir(s)
		}
		w.Visit = func(rel string, d fs.DirEntry, dir *search.Dir) {
			if !d.Type().IsRegular() {
				return
			}
			key := sub(rel)
			if include != nil {
				name := key
				if includeBase {
					name = d.Name()
				}
				if !include.Match(name) {
					return
				}
			}
			if !kept.Wants(key) {
				return
			}
			f, err := dir.Open(d.Name())
			if err != nil {
				return
			}
			hits, _, err := s.Search(f)
			f.Close()
			if err != nil || hits.Matches == 0 {
				return
			}
			abs := resolved + string(filepath.Separator) + filepath.FromSlash(key) // key is clean
			kept.Add(key, hits.Matches, grepFile{env.Workspace.Display(abs), hits})
		}
		if err := w.Run(ctx); err != nil {
			return nil, err
		}
		walked = w
	}
	return withUnusedIgnores(t.format(kept, maxMatches, before+after > 0), env, walked), nil
}

// grepOne searches the single file at the resolved path, opened through
// its root; a result is the error the model sees.
func grepOne(env *tools.Env, s *search.Grep, path string) (search.Hits, *tools.Result) {
	shown := env.Workspace.Display(path)
	f, err := env.Workspace.Open(path)
	if err != nil {
		return search.Hits{}, tools.Errorf("cannot read %s: %v", shown, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return search.Hits{}, tools.Errorf("%s is not a regular file", shown)
	}
	hits, binary, err := s.Search(f)
	switch {
	case err != nil:
		return search.Hits{}, tools.Errorf("cannot read %s: %v", shown, err)
	case binary:
		return search.Hits{}, tools.Errorf("%s is a binary file", shown)
	}
	return hits, nil
}

// format prints the kept files in path order, stopping at maxMatches
// matches or the output cap.
func (t *grepTool) format(kept *search.FirstK[grepFile], maxMatches int, withContext bool) *tools.Result {
	files, capped := kept.Sorted()
	if len(files) == 0 {
		return &tools.Result{Output: "No matches found"}
	}
	var b strings.Builder
	matches, nfiles := 0, 0
	full := false
	for fi, f := range files {
		if full {
			break
		}
		if withContext && fi > 0 {
			b.WriteString("--\n")
		}
		nfiles++
		prev := 0
		for _, l := range f.V.hits.Lines {
			if l.Match && matches == maxMatches {
				full, capped = true, true
				break
			}
			if withContext && prev > 0 && l.N != prev+1 {
				b.WriteString("--\n")
			}
			prev = l.N
			sep := "-"
			if l.Match {
				sep = ":"
				matches++
			}
			line := f.V.shown + sep + strconv.Itoa(l.N) + sep + l.Text + "\n"
			if b.Len()+len(line) > t.opts.MaxOutputBytes {
				full, capped = true, true
				break
			}
			b.WriteString(line)
		}
	}
	summary := fmt.Sprintf("%d matches in %d files", matches, nfiles)
	if matches == 1 {
		summary = fmt.Sprintf("1 match in %d file", nfiles)
	}
	if capped {
		summary += " (capped; there may be more: narrow the pattern, path or include)"
	}
	b.WriteString("\n" + summary + "\n")
	return &tools.Result{Output: b.String(), Content: []tools.Content{tools.TextContent(summary)}}
}
