// This file implements the policy.

package cmdenv

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/dshd/dshd/internal/secret"
	"github.com/dshd/dshd/tools/internal/choice"
)

// Inherit is where a command's environment starts.
type Inherit string

// The starting points.
const (
	// InheritAll starts from every variable.
	InheritAll Inherit = "all"
	// InheritCore starts from the [Core] variables.
	InheritCore Inherit = "core"
	// InheritNone starts empty: only Set entries are passed.
	InheritNone Inherit = "none"
)

// ParseInherit reads "all", "core" or "none"; "" is all.
func ParseInherit(s string) (Inherit, error) {
	return choice.Parse("command environment", s, InheritAll, InheritCore, InheritNone)
}

// Core are the variables [InheritCore] keeps: what programs need to find
// executables, their home and temp dirs, their user, locale and time zone.
var Core = []string{
	"PATH", "HOME", "USER", "LOGNAME", "USERNAME", "SHELL", "TERM",
	"TMPDIR", "TEMP", "TMP", "LANG", "LC_ALL", "LC_CTYPE", "TZ",
}

// Policy says which variables a command gets. The zero value inherits
// everything except names that look like secrets ([secret.Name]).
type Policy struct {
	// Inherit is the starting point; "" is InheritAll.
	Inherit Inherit
	// KeepSecretNames turns off the default excludes (the names
	// [secret.Name] takes for credentials: KEY, SECRET, TOKEN, PASSWORD…).
	KeepSecretNames bool
	// Exclude drops the names matching one of these globs.
	Exclude []string
	// Set adds NAME=VALUE entries, replacing inherited ones.
	Set []string
	// IncludeOnly, when not empty, keeps only the names matching one of
	// these globs (Set entries included).
	IncludeOnly []string
	// Secrets are names never passed, whatever the rules above say:
	// dshd's own token and model key variables.
	Secrets []string
	// SecretValues are values never passed, under any name: the values of
	// the Secrets, read by whoever builds the policy. Empty strings are
	// ignored.
	SecretValues []string
}

// Validate checks the patterns and the Set entries.
func (p *Policy) Validate() error {
	if _, err := ParseInherit(string(p.Inherit)); err != nil {
		return err
	}
	for _, list := range [][]string{p.Exclude, p.IncludeOnly} {
		for _, pat := range list {
			if _, err := path.Match(strings.ToUpper(pat), ""); err != nil {
				return fmt.Errorf("command environment pattern %q: %w", pat, err)
			}
		}
	}
	for _, kv := range p.Set {
		if name, _, ok := strings.Cut(kv, "="); !ok || name == "" {
			return fmt.Errorf("command environment entry %q: want NAME=VALUE", kv)
		}
	}
	return nil
}

// Apply returns the environment a command gets from environ (entries
// NAME=VALUE, as os.Environ returns them), in environ's order with the
// Set entries after. A name appears once; a later duplicate in environ
// wins, as it does for getenv.
func (p *Policy) Apply(environ []string) []string {
	var names []string
	values := map[string]string{}
	put := func(name, value string) {
		if _, ok := values[name]; !ok {
			names = append(names, name)
		}
		values[name] = value
	}
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" || !p.inherits(name) {
			continue
		}
		if !p.KeepSecretNames && secret.Name(name) || matchAny(p.Exclude, name) {
			continue
		}
		put(name, value)
	}
	for _, kv := range p.Set {
		if name, value, ok := strings.Cut(kv, "="); ok && name != "" {
			put(name, value)
		}
	}
	out := make([]string, 0, len(names))
	for _, name := range names {
		v := values[name]
		if len(p.IncludeOnly) > 0 && !matchAny(p.IncludeOnly, name) {
			continue
		}
		if slices.Contains(p.Secrets, name) || v != "" && slices.Contains(p.SecretValues, v) {
			continue
		}
		out = append(out, name+"="+v)
	}
	return out
}

func (p *Policy) inherits(name string) bool {
	switch p.Inherit {
	case InheritNone:
		return false
	case InheritCore:
		return slices.Contains(Core, name)
	}
	return true
}

// matchAny reports whether name matches one of the globs, ignoring case.
// Validate has rejected malformed patterns; one that slipped through
// matches nothing.
func matchAny(patterns []string, name string) bool {
	n := strings.ToUpper(name)
	for _, pat := range patterns {
		if ok, _ := path.Match(strings.ToUpper(pat), n); ok {
			return true
		}
	}
	return false
}
