// This file finds definition files and reads them, with the precedence
// between the places they come from.

package definition

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dshd/dshd/internal/mdfiles"
)

// Source is a directory of definition files.
type Source struct {
	Dir     string
	Dialect Dialect
	Scope   Scope
}

// WorkspaceSources are the workspace's directories, first wins:
// .dshd/agents, then Claude Code's .claude/agents.
func WorkspaceSources(cwd string) []Source {
	return []Source{
		{Dir: filepath.Join(cwd, ".dshd", "agents"), Dialect: DSHD, Scope: ScopeWorkspace},
		{Dir: filepath.Join(cwd, ".claude", "agents"), Dialect: ClaudeCode, Scope: ScopeWorkspace},
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

// MaxFileSize is the largest definition file read; a larger one is an
// error (a system prompt is not a data file).
const MaxFileSize = 256 << 10

// scan lists the *.md files of sources, in source order and, within a
// source, by name. A directory that does not exist has none.
func scan(sources []Source) ([]mdfiles.Stamp, []Source, []*Error) {
	var stamps []mdfiles.Stamp
	var from []Source
	var errs []*Error
	for _, src := range sources {
		files, err := mdfiles.List(src.Dir)
		if err != nil {
			errs = append(errs, &Error{File: src.Dir, Err: err, scope: src.Scope})
			continue
		}
		for _, f := range files {
			if f.Err != nil {
				errs = append(errs, &Error{File: f.Path, Err: f.Err, scope: src.Scope})
				continue
			}
			if !f.Info.Mode().IsRegular() {
				continue
			}
			stamps = append(stamps, f.Stamp())
			from = append(from, src)
		}
	}
	return stamps, from, errs
}

// cache keeps parsed files by version, so reading a directory again
// parses only what changed.
type cache struct {
	parsed map[mdfiles.Stamp]parsed
}

type parsed struct {
	def *Definition
	err *Error
}

func (c *cache) load(stamps []mdfiles.Stamp, from []Source) ([]*Definition, []*Error) {
	results := make([]parsed, len(stamps))
	var missing []int
	for i, st := range stamps {
		if p, ok := c.parsed[st]; ok {
			results[i] = p
		} else {
			missing = append(missing, i)
		}
	}
	parallel(len(missing), func(j int) {
		i := missing[j]
		results[i] = parseFile(stamps[i], from[i])
	})
	var errs []*Error
	next := make(map[mdfiles.Stamp]parsed, len(stamps))
	var defs []*Definition
	byName := map[string]*Definition{}
	for i, st := range stamps {
		p := results[i]
		next[st] = p
		if p.err != nil {
			errs = append(errs, p.err)
			continue
		}
		d := p.def
		if have, clash := byName[d.Name()]; clash {
			if filepath.Dir(have.File) == filepath.Dir(d.File) {
				errs = append(errs, d.errorAt(keyName, fmt.Errorf("%s already defines the agent %q", have.File, d.Name())))
			}
			continue // an earlier source wins
		}
		byName[d.Name()] = d
		defs = append(defs, d)
	}
	c.parsed = next
	slices.SortStableFunc(errs, func(a, b *Error) int { return strings.Compare(a.File, b.File) })
	return defs, errs
}

func parseFile(st mdfiles.Stamp, src Source) parsed {
	if st.Size > MaxFileSize {
		return parsed{err: &Error{File: st.Path, Err: fmt.Errorf("%d bytes; a definition may have at most %d", st.Size, MaxFileSize), scope: src.Scope}}
	}
	data, err := os.ReadFile(st.Path)
	if err != nil {
		return parsed{err: &Error{File: st.Path, Err: err, scope: src.Scope}}
	}
	d, err := Parse(st.Path, data, src.Dialect, src.Scope)
	if err != nil {
		var de *Error
		if !errors.As(err, &de) {
			de = &Error{File: st.Path, Err: err, scope: src.Scope}
		}
		return parsed{err: de}
	}
	return parsed{def: d}
}
