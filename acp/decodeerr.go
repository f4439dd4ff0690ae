// decodeerr.go: decoding failures worded in protocol terms — which field,
// what JSON it must hold — never in Go's (type names, json.RawMessage).

package acp

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// paramsError is the -32602 error for a failure to decode the value of
// field ("" for the params themselves): the innermost field it can name and
// what that field must be.
func paramsError(field string, err error) *Error {
	var (
		e    *Error
		el   *elementError
		te   *json.UnmarshalTypeError
		ue   *unionTagError
		bad  *badValueError
		tagd *taggedError
		mem  *memberError
	)
	switch {
	case errors.As(err, &e):
		return e
	case errors.As(err, &el):
		return paramsError(fmt.Sprintf("%s[%d]", fieldOrParams(field), el.index), el.err)
	case errors.As(err, &tagd):
		return paramsError(field, tagd.err)
	case errors.As(err, &mem):
		return paramsError(joinField(field, mem.key), mem.err)
	case errors.As(err, &ue):
		return invalidField(joinField(field, ue.key), ue.reason())
	case errors.As(err, &bad):
		return invalidField(fieldOrParams(joinField(field, bad.key)), bad.reason)
	case errors.As(err, &te):
		return invalidField(fieldOrParams(joinField(field, goFieldPath(te.Field))), "must be "+jsonKind(te.Type)+foundValue(te.Value))
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return invalidField(fieldOrParams(field), "is not valid JSON")
	}
	return invalidField(fieldOrParams(field), "is malformed")
}

func fieldOrParams(field string) string {
	if field == "" {
		return "params"
	}
	return field
}

func joinField(parent, child string) string {
	switch {
	case child == "":
		return parent
	case parent == "":
		return child
	}
	return parent + "." + child
}

// goFieldPath turns encoding/json's path of a field ("alias.sessionId") into
// the JSON path: the embedded alias types our decoders use are not fields.
func goFieldPath(path string) string {
	parts := strings.Split(path, ".")
	parts = slices.DeleteFunc(parts, func(p string) bool { return p == "alias" || p == "" })
	return strings.Join(parts, ".")
}

// jsonKind names the JSON a Go type is decoded from.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[json.RawMessage]() {
		return "a JSON value"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a JSON value"
}

// foundValue words encoding/json's description of the value it met
// ("string", "number 1.5", "object").
func foundValue(v string) string {
	if n, ok := strings.CutPrefix(v, "number "); ok {
		return ", not " + n
	}
	switch v {
	case "string", "number":
		return ", not a " + v
	case "bool":
		return ", not a boolean"
	case "array", "object":
		return ", not an " + v
	case "":
		return ""
	}
	return ", not " + v
}

// elementError is the failure of element index of a list.
type elementError struct {
	index int
	err   error
}

func (e *elementError) Error() string { return fmt.Sprintf("element %d: %v", e.index, e.err) }
func (e *elementError) Unwrap() error { return e.err }

// memberError is the failure of a member of an object, decoded on its own.
type memberError struct {
	key string
	err error
}

func (e *memberError) Error() string { return fmt.Sprintf("%s: %v", e.key, e.err) }
func (e *memberError) Unwrap() error { return e.err }

// taggedError is the failure of a union variant, named by its tag.
type taggedError struct {
	tag string
	err error
}

func (e *taggedError) Error() string { return fmt.Sprintf("acp: %s: %v", e.tag, e.err) }
func (e *taggedError) Unwrap() error { return e.err }

// unionTagError is a union value whose discriminator is missing or names
// no variant.
type unionTagError struct {
	union, key, tag string
	present         bool
	known           []string
}

func (e *unionTagError) Error() string {
	if !e.present {
		return fmt.Sprintf("acp: %s: missing %q%s", e.union, e.key, e.knownList())
	}
	return "acp: " + e.reason()
}

// reason is the error's text beside the discriminator's field name.
func (e *unionTagError) reason() string {
	if !e.present {
		return "required" + e.knownList()
	}
	return fmt.Sprintf("unknown %s %s %q%s", e.union, e.key, e.tag, e.knownList())
}

func (e *unionTagError) knownList() string {
	if len(e.known) == 0 {
		return ""
	}
	return " (known: " + strings.Join(e.known, ", ") + ")"
}

// badValueError is a value, or its member key, that is not what the
// protocol wants there.
type badValueError struct {
	key    string
	reason string
}

func (e *badValueError) Error() string {
	if e.key == "" {
		return "acp: " + e.reason
	}
	return fmt.Sprintf("acp: %q %s", e.key, e.reason)
}
