// This file finds the DSHD_* variables of an environment that name no
// setting: a misspelled one (DSHD_MODLE) would otherwise do nothing.

package config

import (
	"slices"
	"strings"

	"github.com/dshd/dshd/internal/suggest"
)

// ownVars are the DSHD_* variables dshd reads that are no setting.
var ownVars = []string{"DSHD_CONFIG", "DSHD_TOKEN"}

// UnknownEnv returns a warning for each DSHD_* variable of environ
// ("NAME=VALUE" items, os.Environ's form) that is neither a setting's
// variable (of any command), nor one dshd reads besides (DSHD_CONFIG,
// DSHD_TOKEN), nor one the settings name as a key or a variable to pass
// on (--api-key-env, a binding's token-env or pass-env, a named agent's
// passEnv), nor one of also. Each names the variable and, when there is
// one, the closest setting's. They are warnings, not errors: the
// environment is shared with other programs, and a variable may be meant
// for a newer dshd.
func (s *Settings) UnknownEnv(environ []string, also ...string) []string {
	known := slices.Concat(ownVars, also)
	for _, row := range table {
		known = append(known, EnvName(row.flag))
	}
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "DSHD_") || slices.Contains(known, name) || s.names(name) {
			continue
		}
		out = append(out, "env "+name+": no such setting, ignored"+suggest.DidYouMean(name, known))
	}
	return out
}

// names reports whether the settings name the variable name as one to
// read or pass on.
func (s *Settings) names(name string) bool {
	if s.APIKeyEnv == name {
		return true
	}
	for _, b := range s.Subagents {
		if strings.Contains(b, name) {
			return true
		}
	}
	for _, a := range s.Agents {
		if slices.Contains(a.PassEnv, name) {
			return true
		}
	}
	return false
}
