// This file implements the {{var}} renderer.

package prompt

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/dshd/dshd/internal/utf8cut"
)

// Vars is the registry of variables a template may use. Only names
// present in the map are variables; a Go map has no inherited keys, so
// "constructor" or "__proto__" is unregistered unless someone registered
// it. A nil Vars registers nothing.
type Vars map[string]string

// Resolver supplies a value for a name that is not registered in the
// [Vars] given to [RenderWith]; it reports false when it has none. It is
// called once for each occurrence of such a name, in template order, and
// its values are never re-scanned.
type Resolver func(name string) (value string, ok bool)

// Errors a [*RenderError] matches with errors.Is.
var (
	// ErrUnknownVariable is a well-formed group whose name is neither
	// registered nor supplied by the Resolver.
	ErrUnknownVariable = errors.New("unknown variable")
	// ErrMalformedGroup is a "{{" that opens no complete group while a
	// "}}" still follows it.
	ErrMalformedGroup = errors.New("malformed group")
)

// RenderError reports why a template did not render and where.
type RenderError struct {
	// Offset is the byte offset of the group's "{{" in the template.
	Offset int
	// Line and Column are the 1-based position of that "{{"; Column
	// counts runes.
	Line, Column int
	// Name is the variable's name for ErrUnknownVariable, "" otherwise.
	Name string
	// Group is the offending text from "{{" up to and including the
	// first "}}" after it.
	Group string
	// Err is ErrUnknownVariable or ErrMalformedGroup.
	Err error
	// Registered are the names of the [Vars] the template was rendered
	// with, sorted, for ErrUnknownVariable (a misspelt name is easier to
	// see next to the right one); nil otherwise.
	Registered []string
}

// NamePattern is the rule a variable name follows, exactly: no spaces
// around it, no capitals, no dots or dashes, no leading underscore.
const NamePattern = "^[a-z][a-z0-9_]*$"

// maxGroupInMessage caps how much of a malformed group an error message
// quotes, so a runaway group cannot flood a log line.
const maxGroupInMessage = 64

func (e *RenderError) Error() string {
	if e.Name != "" {
		known := "(none)"
		if len(e.Registered) > 0 {
			known = strings.Join(e.Registered, ", ")
		}
		return fmt.Sprintf("prompt: line %d, column %d: %v %q; registered variables: %s", e.Line, e.Column, e.Err, e.Name, known)
	}
	g := e.Group
	if len(g) > maxGroupInMessage {
		g = utf8cut.Prefix(g, maxGroupInMessage) + "…"
	}
	return fmt.Sprintf("prompt: line %d, column %d: %v %q: want {{name}} with name matching %s", e.Line, e.Column, e.Err, g, NamePattern)
}

// Unwrap returns the sentinel the error matches.
func (e *RenderError) Unwrap() error { return e.Err }

// Render replaces every {{name}} group of tmpl with vars[name]. It is
// [RenderWith] without a Resolver.
func Render(tmpl string, vars Vars) (string, error) {
	return RenderWith(tmpl, vars, nil)
}

// RenderWith is [Render] with a fallback: a name missing from vars is
// asked of missing (which may be nil) before it becomes an
// ErrUnknownVariable. The agent uses it to supply a variable, such as
// {{cwd}}, that whoever built vars forgot.
func RenderWith(tmpl string, vars Vars, missing Resolver) (string, error) {
	var b strings.Builder
	b.Grow(len(tmpl))
	tail, err := scan(tmpl, func(literal string, name string, open, end int) error {
		v, ok := vars[name]
		if !ok && missing != nil {
			v, ok = missing(name)
		}
		if !ok {
			e := newError(tmpl, open, end, name, ErrUnknownVariable)
			e.Registered = slices.Sorted(maps.Keys(vars))
			return e
		}
		b.WriteString(literal)
		b.WriteString(v)
		return nil
	})
	if err != nil {
		return "", err
	}
	b.WriteString(tail)
	return b.String(), nil
}

// Variables returns the distinct names tmpl uses, in order of first
// occurrence, or the *RenderError of its first malformed group. It tells
// a caller which variables a template needs before rendering it.
func Variables(tmpl string) ([]string, error) {
	var names []string
	seen := make(map[string]bool)
	_, err := scan(tmpl, func(_ string, name string, _, _ int) error {
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
		return nil
	})
	return names, err
}

// scan walks the groups of tmpl in order. For each well-formed group it
// calls group with the literal text since the previous group, the name,
// and the group's byte range [open, end). It returns the literal text
// after the last group, or the first error (a malformed group, or
// whatever group returned).
func scan(tmpl string, group func(literal, name string, open, end int) error) (tail string, err error) {
	rest := 0
	for {
		i := strings.Index(tmpl[rest:], "{{")
		if i < 0 {
			break
		}
		open := rest + i
		j := strings.Index(tmpl[open+2:], "}}")
		if j < 0 {
			// A lone "{{": no "}}" follows anywhere, so nothing later can
			// be a group either.
			break
		}
		closing := open + 2 + j
		end := closing + 2
		name, ok := parseName(tmpl[open+2 : closing])
		if !ok {
			return "", newError(tmpl, open, end, "", ErrMalformedGroup)
		}
		if err := group(tmpl[rest:open], name, open, end); err != nil {
			return "", err
		}
		rest = end
	}
	return tmpl[rest:], nil
}

// parseName returns the inside of a group's braces when it is a name:
// [NamePattern], nothing around it.
func parseName(s string) (string, bool) {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return "", false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return "", false
		}
	}
	return s, true
}

func newError(tmpl string, open, end int, name string, sentinel error) *RenderError {
	before := tmpl[:open]
	line := strings.Count(before, "\n") + 1
	col := utf8.RuneCountInString(before[strings.LastIndexByte(before, '\n')+1:]) + 1
	return &RenderError{
		Offset: open,
		Line:   line,
		Column: col,
		Name:   name,
		Group:  tmpl[open:end],
		Err:    sentinel,
	}
}
