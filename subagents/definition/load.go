// This file finds definition files and reads them, with the precedence
// between the places they come from.

package definition

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dshd/dshd/internal/mdfiles"
	"github.com/dshd/dshd/internal/settingnames"
	"github.com/dshd/dshd/internal/smallfile"
)

// Source is a directory of definition files.
type Source struct {
	Dir     string
	Dialect Dialect
	Scope   Scope
	// Workspace is the directory a workspace's Dir is in, through which
	// (as an os.Root, internal/smallfile) its files are listed and read:
	// the repository is a peer, so a link that leads outside the
	// workspace is a mistake, and nothing outside is read. The user's
	// directory has none: the user's own files may link anywhere.
	Workspace string
}

// WorkspaceSources are the workspace's directories, first wins:
// .dshd/agents, then Claude Code's .claude/agents.
func WorkspaceSources(cwd string) []Source {
	return []Source{
		{Dir: filepath.Join(cwd, ".dshd", "agents"), Dialect: DSHD, Scope: ScopeWorkspace, Workspace: cwd},
		{Dir: filepath.Join(cwd, ".claude", "agents"), Dialect: ClaudeCode, Scope: ScopeWorkspace, Workspace: cwd},
	}
}

// UserSources are the user's directories: $XDG_CONFIG_HOME/dshd/agents,
// configHome being $XDG_CONFIG_HOME (or ~/.config).
func UserSources(configHome string) []Source {
	if configHome == "" {
		return nil
	}
	return []Source{{Dir: filepath.Join(configHome, "dshd", "agents"), Dialect: DSHD, Scope: ScopeUser}}
}

// DefaultMaxFileBytes is the largest definition file read, and the
// largest schema file one names, when [Options] say nothing.
const DefaultMaxFileBytes = 256 << 10

// DefaultMaxFiles is how many definition files are read from a
// workspace, and from the user's directory, when [Options] say nothing:
// each is a tool whose description goes to the model in every request,
// and OpenAI's Chat Completions take at most 128 tools in one.
const DefaultMaxFiles = 128

// Settings are the names of the bounds in [Options] in what is said of a
// hit (internal/settingnames): the daemon's flags.
type Settings struct {
	MaxFileBytes string
	MaxFiles     string
}

// bounds are how the files a definition is read from are read, and how
// many definition files are listed from a workspace's directories
// together and from the user's.
type bounds struct {
	file, schema    smallfile.Bound
	workspace, user mdfiles.Count
}

// boundsOf are the bounds of most bytes (0: [DefaultMaxFileBytes]) and
// files (0: [DefaultMaxFiles]), named by names.
func boundsOf(most int64, files int, names Settings) bounds {
	settingnames.Fill(&names)
	most = cmp.Or(most, DefaultMaxFileBytes)
	count := mdfiles.Count{Max: cmp.Or(files, DefaultMaxFiles), What: "agent definition", Setting: names.MaxFiles}
	b := bounds{
		file:      smallfile.Bound{Max: most, What: "a definition", Setting: names.MaxFileBytes},
		schema:    smallfile.Bound{Max: most, What: "an output schema file", Setting: names.MaxFileBytes},
		workspace: count,
		user:      count,
	}
	b.workspace.Where = "a workspace's .dshd/agents and .claude/agents together"
	b.user.Where = "the user's directory"
	return b
}

// scanned is what [scan] found.
type scanned struct {
	// stamps are the files listed, and from their sources.
	stamps []mdfiles.Stamp
	from   []Source
	// errs are the directories that could not be read and the files that
	// could not be stat'ed: neither shows in the stamps.
	errs []*Error
	// over are the directories that held more files than their count
	// left them; the files past it were not listed.
	over []overflow
}

// overflow is a directory over its count, and whose it is.
type overflow struct {
	mdfiles.TooManyError
	scope Scope
}

// scan lists the *.md files of sources, in source order and, within a
// source, by name, within b's counts: the workspace's sources share one,
// the user's have another, so that a repository cannot crowd out the
// user's own definitions. A directory that does not exist has none.
func scan(sources []Source, b bounds) scanned {
	workspace, user := b.workspace.Quota(), b.user.Quota()
	var out scanned
	for _, src := range sources {
		q := workspace
		if src.Scope == ScopeUser {
			q = user
		}
		files, over, err := q.List(src.Workspace, src.Dir)
		if err != nil {
			out.errs = append(out.errs, &Error{File: src.Dir, Err: err, scope: src.Scope})
			continue
		}
		if over != nil {
			out.over = append(out.over, overflow{*over, src.Scope})
		}
		for _, f := range files {
			if f.Err != nil {
				out.errs = append(out.errs, &Error{File: f.Path, Err: f.Err, scope: src.Scope})
				continue
			}
			// One that is not a regular file is stamped too: reading it
			// is its mistake, kept with its stamp like a parse error.
			out.stamps = append(out.stamps, f.Stamp())
			out.from = append(out.from, src)
		}
	}
	return out
}

// mistakes are s's errs, then one for each directory over its count.
func (s scanned) mistakes() []*Error {
	out := slices.Clone(s.errs)
	for _, o := range s.over {
		out = append(out, &Error{File: o.Dir, Err: &o.TooManyError, scope: o.scope})
	}
	return out
}

// cache keeps parsed files by version, so reading a directory again
// parses only what changed. A version whose stamp was not yet
// [mdfiles.Settle] old when it was read may hide a rewrite (a same-size
// write within one clock tick keeps the stamp), so it is read again at
// the next load and parsed again only when its text differs.
type cache struct {
	bounds bounds
	parsed map[mdfiles.Stamp]parsed
}

type parsed struct {
	def *Definition
	err *Error
	// schema is the stamp of the schema file the definition names, taken
	// before that file was read (Path "" when it names none): a change of
	// it is a change of the definition. schemaRoot is the workspace it
	// was stat'ed through ("" for the user's definition's).
	schema     mdfiles.Stamp
	schemaRoot string
	// recheck: the stamp (the file's or its schema's) was too new to
	// trust when the file was read; text is what was read then.
	recheck bool
	text    []byte
}

// schemaMoved reports whether p's schema file changed since it was read.
func (p parsed) schemaMoved() bool {
	return p.schema.Path != "" && mdfiles.StampOf(p.schemaRoot, p.schema.Path) != p.schema
}

// schemasMoved reports whether the schema file of any definition it
// holds changed since it was read: a stat of each.
func (c *cache) schemasMoved() bool {
	for _, p := range c.parsed {
		if p.schemaMoved() {
			return true
		}
	}
	return false
}

// loaded is what [cache.load] found.
type loaded struct {
	defs []*Definition
	errs []*Error
	// fresh: a file was parsed that the last load had not (added, or
	// changed); a deleted one shows in the stamps.
	fresh bool
	// settled: every stamp was Settle old, so the next load can trust
	// an unchanged stamp.
	settled bool
}

// load reads the files stamps lists, from their sources, as of now (a
// time taken before the stamps). On a name clash the earlier file wins.
func (c *cache) load(stamps []mdfiles.Stamp, from []Source, now time.Time) loaded {
	results := make([]parsed, len(stamps))
	var todo []int
	for i, st := range stamps {
		if p, ok := c.parsed[st]; ok && !p.recheck && !p.schemaMoved() {
			results[i] = p
		} else {
			todo = append(todo, i)
		}
	}
	var fresh atomic.Bool
	parallel(len(todo), func(j int) {
		i := todo[j]
		st, src := stamps[i], from[i]
		text, err := readFile(st, src, c.bounds.file)
		p, ok := c.parsed[st]
		// A definition with a schema file is parsed again, which reads
		// the schema again: its text is not kept to compare.
		if err != nil || !ok || p.schema.Path != "" || !bytes.Equal(text, p.text) {
			p = parsed{err: err}
			if err == nil {
				p = parseFile(st, src, text, c.bounds.schema)
			}
			fresh.Store(true)
		}
		// A file that could not be read has no text to compare; its
		// stamp (or its absence) tells when to try again.
		p.recheck = err == nil && (!st.Settled(now) || p.schema.Path != "" && !p.schema.Settled(now))
		p.text = nil
		if p.recheck {
			p.text = text
		}
		results[i] = p
	})
	out := loaded{fresh: fresh.Load(), settled: true}
	next := make(map[mdfiles.Stamp]parsed, len(stamps))
	byName := map[string]*Definition{}
	for i, st := range stamps {
		p := results[i]
		next[st] = p
		out.settled = out.settled && !p.recheck
		if p.err != nil {
			out.errs = append(out.errs, p.err)
			continue
		}
		d := p.def
		if have, clash := byName[d.Name()]; clash {
			if filepath.Dir(have.File) == filepath.Dir(d.File) {
				out.errs = append(out.errs, d.errorAt(keyName, fmt.Errorf("%s already defines the agent %q", have.File, d.Name())))
			}
			continue // an earlier source wins
		}
		byName[d.Name()] = d
		out.defs = append(out.defs, d)
	}
	c.parsed = next
	slices.SortStableFunc(out.errs, func(a, b *Error) int { return strings.Compare(a.File, b.File) })
	return out
}

// readFile reads one definition file within bound, a workspace's through
// the workspace (a link swapped in since the listing cannot lead out);
// one whose stamp says it is not a regular file is not opened.
func readFile(st mdfiles.Stamp, src Source, bound smallfile.Bound) ([]byte, *Error) {
	var data []byte
	var err error = &smallfile.NotRegularError{Mode: st.Type}
	if st.Type.IsRegular() {
		data, err = smallfile.ReadBelow(src.Workspace, st.Path, bound)
	}
	if err != nil {
		return nil, &Error{File: st.Path, Err: err, scope: src.Scope}
	}
	return data, nil
}

// parseFile parses the definition file st, whose text is data; a schema
// file it names is read within schemaBound.
func parseFile(st mdfiles.Stamp, src Source, data []byte, schemaBound smallfile.Bound) parsed {
	d := newDefinition(st.Path, src.Dialect, src.Scope, schemaBound)
	err := d.parse(data)
	p := parsed{schema: d.schemaStamp, schemaRoot: d.schemaRoot}
	if err != nil {
		var de *Error
		if !errors.As(err, &de) {
			de = &Error{File: st.Path, Err: err, scope: src.Scope}
		}
		p.err = de
		return p
	}
	p.def = d
	return p
}
