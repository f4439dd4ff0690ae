// This file parses .gitignore files and decides whether a path is ignored,
// with git's precedence: the deepest file first, the last matching line of
// a file wins, "!" re-includes.

package search

import (
	"strings"
)

// ignoreRule is one pattern line of a .gitignore.
type ignoreRule struct {
	segs     []segment
	negate   bool
	dirOnly  bool
	anchored bool // has a slash before its end: relative to the file's directory
}

// parseGitignore returns the rules of a .gitignore's content.
func parseGitignore(data string) []ignoreRule {
	var rules []ignoreRule
	for line := range strings.SplitSeq(data, "\n") {
		line = strings.TrimSuffix(line, "\r")
		if line == "" || line[0] == '#' {
			continue
		}
		// Trailing spaces are ignored unless escaped with a backslash.
		for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, `\ `) {
			line = line[:len(line)-1]
		}
		var r ignoreRule
		switch {
		case line[0] == '!':
			r.negate = true
			line = line[1:]
		case strings.HasPrefix(line, `\!`), strings.HasPrefix(line, `\#`):
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly = true
			line = strings.TrimRight(line, "/")
		}
		if line == "" {
			continue
		}
		if strings.Contains(line, "/") {
			r.anchored = true
			line = strings.TrimPrefix(line, "/")
		}
		for _, s := range strings.Split(line, "/") {
			if s == "" {
				continue
			}
			seg := compileSegment(s)
			if seg.kind == segDoubleStar && len(r.segs) > 0 && r.segs[len(r.segs)-1].kind == segDoubleStar {
				continue
			}
			r.segs = append(r.segs, seg)
		}
		if n := len(r.segs); n > 1 && r.segs[n-1].kind == segDoubleStar {
			r.segs[n-1].kind = segTrailingStars
		}
		if len(r.segs) > 0 {
			rules = append(rules, r)
		}
	}
	return rules
}

// match reports whether the rule matches rel, a slash-separated path
// relative to the .gitignore's directory.
func (r *ignoreRule) match(rel string, isDir bool) bool {
	if r.dirOnly && !isDir {
		return false
	}
	if !r.anchored {
		return r.segs[0].match(rel[strings.LastIndexByte(rel, '/')+1:])
	}
	return matchSegments(r.segs, strings.Split(rel, "/"))
}

// ignoreStack is the chain of .gitignore files that apply to a directory,
// the deepest first. Walks extend it immutably, so concurrent workers can
// share their parents' stacks.
type ignoreStack struct {
	parent *ignoreStack
	dir    string // slash path relative to the walk's base; "" for the base
	rules  []ignoreRule
}

// push returns s extended with the rules of the .gitignore in dir, or s
// itself when there are none.
func (s *ignoreStack) push(dir string, rules []ignoreRule) *ignoreStack {
	if len(rules) == 0 {
		return s
	}
	return &ignoreStack{parent: s, dir: dir, rules: rules}
}

// ignored reports whether rel (relative to the walk's base) is ignored.
func (s *ignoreStack) ignored(rel string, isDir bool) bool {
	for f := s; f != nil; f = f.parent {
		sub := rel
		if f.dir != "" {
			if !strings.HasPrefix(rel, f.dir+"/") {
				continue
			}
			sub = rel[len(f.dir)+1:]
		}
		for i := len(f.rules) - 1; i >= 0; i-- {
			if f.rules[i].match(sub, isDir) {
				return !f.rules[i].negate
			}
		}
	}
	return false
}
