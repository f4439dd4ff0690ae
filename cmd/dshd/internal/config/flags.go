// This file declares the settings as flags and words flag mistakes.

package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/dshd/dshd/internal/suggest"
)

// EnvName returns the environment variable of a flag: DSHD_ + upper snake.
func EnvName(flag string) string {
	return "DSHD_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// uses reports whether command cmd uses setting s.
func (s setting) uses(cmd Command) bool {
	only := s.only
	if only == 0 {
		only = agentCommands
	}
	return only&cmd != 0
}

// AddFlags declares on fs every setting cmd uses, plus --config. A flag
// keeps its text as given: [Load] parses and checks it with the value's
// other possible sources, so a mistake reads the same wherever it was made.
func AddFlags(fs *pflag.FlagSet, cmd Command) {
	fs.String("config", "", "config file (default $XDG_CONFIG_HOME/dshd/config.json; env DSHD_CONFIG)")
	for _, s := range table {
		if !s.uses(cmd) {
			continue
		}
		f := fs.VarPF(&rawValue{kind: s.kind, def: s.def}, s.flag, "", fmt.Sprintf("%s (env %s)", s.usage, EnvName(s.flag)))
		if s.kind == kBool {
			f.NoOptDefVal = "true"
		}
	}
}

// rawValue is a flag's text, parsed later by [Load]; a list setting keeps
// one text per use of the flag.
type rawValue struct {
	kind kind
	def  string
	vals []string
}

func (v *rawValue) String() string {
	if len(v.vals) == 0 {
		return v.def
	}
	return v.vals[len(v.vals)-1]
}

func (v *rawValue) Set(s string) error {
	if v.kind == kList {
		v.vals = append(v.vals, s)
	} else {
		v.vals = []string{s}
	}
	return nil
}

func (v *rawValue) Type() string {
	switch v.kind {
	case kInt:
		return "int"
	case kBool:
		return "bool"
	case kDuration:
		return "duration"
	case kList:
		return "stringArray"
	}
	return "string"
}

// guessedFlags are flags people try that dshd does not have, with what to
// do instead.
var guessedFlags = map[string]string{
	// The one flag dshd will never have.
	"token":   "the token is never a flag, since every user sees command lines in ps; set DSHD_TOKEN or --token-file",
	"version": "the version is the command `dshd version`",
}

// FlagError words a command-line parsing error of command cmdPath ("dshd
// prompt") whose flags are fs as an [*Error]: an unknown flag suggests the
// closest one, and a setting the command does not use says which command
// does.
func FlagError(cmdPath string, fs *pflag.FlagSet, err error) error {
	var (
		notExist *pflag.NotExistError
		noValue  *pflag.ValueRequiredError
		invalid  *pflag.InvalidValueError
		syntax   *pflag.InvalidSyntaxError
	)
	switch {
	case errors.As(err, &notExist):
		name := notExist.GetSpecifiedName()
		if short := notExist.GetSpecifiedShortnames(); short != "" {
			return &Error{Where: "-" + short, Problem: fmt.Sprintf("unknown flag -%s", name)}
		}
		where := "--" + name
		if hint, ok := guessedFlags[name]; ok {
			return &Error{Where: where, Problem: "unknown flag: " + hint}
		}
		if i := slices.IndexFunc(table, func(s setting) bool { return s.flag == name }); i >= 0 {
			users, verb := usersOf(table[i]), "does"
			if strings.Contains(users, " and ") {
				verb = "do"
			}
			return &Error{Where: where, Problem: fmt.Sprintf("%s does not use this setting (%s %s)", cmdPath, users, verb)}
		}
		var names []string
		fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
		hint := ""
		if c := suggest.Closest(name, names); c != "" {
			hint = "; did you mean --" + c + "?"
		}
		return &Error{Where: where, Problem: "unknown flag" + hint}
	case errors.As(err, &noValue):
		return &Error{Where: "--" + noValue.GetSpecifiedName(), Problem: "needs a value"}
	case errors.As(err, &invalid):
		problem := invalid.Unwrap().Error()
		if invalid.GetFlag().Value.Type() == "bool" {
			problem = "want true or false"
		}
		return &Error{Where: "--" + invalid.GetFlag().Name, Value: fmt.Sprintf("%q", invalid.GetValue()), Problem: problem}
	case errors.As(err, &syntax):
		return &Error{Where: syntax.GetSpecifiedFlag(), Problem: "bad flag syntax"}
	}
	return &Error{Problem: err.Error()}
}

// usersOf names the commands that use s.
func usersOf(s setting) string {
	var names []string
	for _, c := range []struct {
		cmd  Command
		name string
	}{{Serve, "dshd serve"}, {Prompt, "dshd prompt"}, {Sessions, "dshd sessions"}} {
		if s.uses(c.cmd) {
			names = append(names, c.name)
		}
	}
	if len(names) > 1 {
		return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
	}
	return strings.Join(names, "")
}
