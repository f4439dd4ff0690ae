// This file defines a configuration mistake and where a value came from.

package config

import (
	"fmt"
	"strings"
)

// Error is a mistake in the configuration, found at start. It prints as
// one line: where the value came from and the setting as the user spelled
// it ("--mode", "env DSHD_MODE", "/etc/dshd.json:3:12: mode"), the value
// as given, and what is wrong with it, with the closest valid name when
// there is one.
type Error struct {
	// Where names the setting and its source.
	Where string
	// Value is the value as given, quoted; empty when the mistake is not
	// in one value (an unknown key, a missing file).
	Value string
	// Problem says what is wrong and, where it can, what would be right.
	Problem string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Where)
	if e.Value != "" {
		b.WriteString(" " + e.Value)
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(e.Problem)
	// One line, whatever a wrapped error's text holds.
	return strings.ReplaceAll(b.String(), "\n", " ")
}

// origin is where one value came from: the Where and Value of an [Error]
// about it.
type origin struct {
	where, value string
	// explicit is false for a built-in default.
	explicit bool
	// file is true for a value of the config file.
	file bool
}

func (o origin) errorf(format string, args ...any) *Error {
	return &Error{Where: o.where, Value: o.value, Problem: fmt.Sprintf(format, args...)}
}

// fromFlag, fromEnv and fromFile build the origin of a value.
func fromFlag(flag, value string) origin {
	return origin{where: "--" + flag, value: fmt.Sprintf("%q", value), explicit: true}
}

func fromEnv(name, value string) origin {
	return origin{where: "env " + name, value: fmt.Sprintf("%q", value), explicit: true}
}

// fromFile names key at offset off of f; raw is the JSON value as written
// (nil when the mistake is about the key itself).
func fromFile(f *file, off int, key string, raw []byte) origin {
	line, col := f.position(off)
	where := fmt.Sprintf("%s:%d:%d", f.path, line, col)
	if key != "" {
		where += ": " + key
	}
	return origin{where: where, value: compact(raw), explicit: true, file: true}
}

// compact shortens a JSON value for a message: one line, at most 60 bytes.
func compact(raw []byte) string {
	s := strings.Join(strings.Fields(string(raw)), " ")
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

// IsSet reports whether setting flag was given by a flag, a variable or
// the config file, rather than left at its default.
func (s *Settings) IsSet(flag string) bool { return s.origins[flag].explicit }

// FromFile reports whether setting flag came from the config file.
func (s *Settings) FromFile(flag string) bool { return s.origins[flag].file }

// FromEnv reports whether setting flag came from its DSHD_* variable.
func (s *Settings) FromEnv(flag string) bool { return strings.HasPrefix(s.origins[flag].where, "env ") }

// APIKeyEnvSet reports whether --api-key-env was given anywhere (an empty
// value then means "no key needed", not "the backend's default").
func (s *Settings) APIKeyEnvSet() bool { return s.IsSet("api-key-env") }

// Invalid returns the configuration error for a value a later stage found
// wrong, with that value's origin: key is a flag name ("model"), an item
// of a list setting ("subagent[2]") or a named agent ("agents.codex").
func (s *Settings) Invalid(key string, err error) error {
	o, ok := s.origins[key]
	if !ok {
		o = origin{where: key + " (default)"}
	}
	return o.errorf("%s", err)
}
