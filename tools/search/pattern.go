// This file matches slash-separated paths against glob patterns with "**",
// the syntax shared by the glob tool, grep's file filter and .gitignore.

package search

import (
	"path"
	"strings"
)

// segment is one compiled path element of a pattern.
type segment struct {
	raw  string
	kind segKind
	lit  string // the literal, prefix or suffix for the fast kinds
}

type segKind uint8

const (
	segLiteral       segKind = iota // "main.go"
	segAny                          // "*"
	segSuffix                       // "*.go"
	segPrefix                       // "test*"
	segGlob                         // anything else path.Match understands
	segDoubleStar                   // "**": zero or more elements
	segTrailingStars                // a .gitignore's final "**": one or more elements
)

func compileSegment(s string) segment {
	switch {
	case s == "**":
		return segment{raw: s, kind: segDoubleStar}
	case s == "*":
		return segment{raw: s, kind: segAny}
	case !strings.ContainsAny(s, `*?[\`):
		return segment{raw: s, kind: segLiteral, lit: s}
	case s[0] == '*' && !strings.ContainsAny(s[1:], `*?[\`):
		return segment{raw: s, kind: segSuffix, lit: s[1:]}
	case s[len(s)-1] == '*' && !strings.ContainsAny(s[:len(s)-1], `*?[\`):
		return segment{raw: s, kind: segPrefix, lit: s[:len(s)-1]}
	}
	return segment{raw: s, kind: segGlob}
}

func (g segment) match(name string) bool {
	switch g.kind {
	case segLiteral:
		return name == g.lit
	case segAny, segDoubleStar, segTrailingStars:
		return true
	case segSuffix:
		return strings.HasSuffix(name, g.lit)
	case segPrefix:
		return strings.HasPrefix(name, g.lit)
	}
	ok, _ := path.Match(g.raw, name)
	return ok
}

// Glob is a compiled glob: one or more alternatives (from braces),
// each a list of segments.
type Glob struct {
	alts [][]segment
}

// CompileGlob compiles a slash-separated pattern. Braces expand to
// alternatives ("*.{ts,tsx}"); "**" as a whole element matches any number
// of elements. A malformed pattern is an error.
func CompileGlob(p string) (*Glob, error) {
	g := &Glob{}
	for _, alt := range expandBraces(p) {
		alt = strings.TrimPrefix(path.Clean("/"+alt), "/")
		var segs []segment
		for _, s := range strings.Split(alt, "/") {
			if _, err := path.Match(s, ""); err != nil {
				return nil, err
			}
			// "a/**/**/b" means the same as "a/**/b" and matches faster.
			if s == "**" && len(segs) > 0 && segs[len(segs)-1].kind == segDoubleStar {
				continue
			}
			segs = append(segs, compileSegment(s))
		}
		g.alts = append(g.alts, segs)
	}
	return g, nil
}

// match reports whether the slash-separated path rel matches.
func (g *Glob) Match(rel string) bool {
	elems := strings.Split(rel, "/")
	for _, a := range g.alts {
		if matchSegments(a, elems) {
			return true
		}
	}
	return false
}

// MayMatchBelow reports whether some path below the directory rel could
// match, so a walk can skip directories that cannot.
func (g *Glob) MayMatchBelow(rel string) bool {
	if rel == "" {
		return true
	}
	elems := strings.Split(rel, "/")
	for _, a := range g.alts {
		if prefixMatches(a, elems) {
			return true
		}
	}
	return false
}

func matchSegments(p []segment, n []string) bool {
	for len(p) > 0 {
		if p[0].kind == segTrailingStars {
			return len(n) > 0
		}
		if p[0].kind == segDoubleStar {
			if len(p) == 1 {
				return true
			}
			for i := 0; i <= len(n); i++ {
				if matchSegments(p[1:], n[i:]) {
					return true
				}
			}
			return false
		}
		if len(n) == 0 || !p[0].match(n[0]) {
			return false
		}
		p, n = p[1:], n[1:]
	}
	return len(n) == 0
}

// prefixMatches reports whether the elements n can begin a path that p
// matches with at least one more element.
func prefixMatches(p []segment, n []string) bool {
	for len(n) > 0 {
		if len(p) == 0 {
			return false
		}
		if p[0].kind == segDoubleStar || p[0].kind == segTrailingStars {
			return true
		}
		if !p[0].match(n[0]) {
			return false
		}
		p, n = p[1:], n[1:]
	}
	return len(p) > 0
}

// expandBraces expands the first {a,b} group of p recursively. Unbalanced
// braces are left as they are.
func expandBraces(p string) []string {
	open := strings.IndexByte(p, '{')
	if open < 0 {
		return []string{p}
	}
	depth := 0
	var parts []string
	start := open + 1
	for i := open; i < len(p); i++ {
		switch p[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				parts = append(parts, p[start:i])
				var out []string
				for _, part := range parts {
					out = append(out, expandBraces(p[:open]+part+p[i+1:])...)
				}
				return out
			}
		case ',':
			if depth == 1 {
				parts = append(parts, p[start:i])
				start = i + 1
			}
		}
	}
	return []string{p}
}
