// This file splits a file into its front matter and body and converts the
// front matter's values.

package frontmatter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Document is a parsed file.
type Document struct {
	// Fields are the front matter's top-level keys, in file order.
	Fields []Field
	// Body is the text after the front matter (the whole file when it has
	// none).
	Body string
	// BodyLine is the 1-based line the body starts on.
	BodyLine int
}

// Field is one top-level key of the front matter and its value.
type Field struct {
	Key string
	// Line and Column are the key's 1-based position in the file.
	Line, Column int
	// Value is the key's YAML value.
	Value *yaml.Node
}

// Error is a mistake in the front matter, at a position of the file.
type Error struct {
	Line, Column int
	// Key is the top-level key the mistake belongs to; "" for the front
	// matter as a whole.
	Key string
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Line > 0 {
		fmt.Fprintf(&b, "%d:%d: ", e.Line, e.Column)
	}
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// ErrNoFrontMatter is Parse's error for a file that does not open with a
// "---" line.
var ErrNoFrontMatter = errors.New("the file does not open with YAML front matter (a first line ---)")

// Parse splits data into its front matter and body. A file that does not
// open with "---" has no fields and is all body, and Parse returns it with
// [ErrNoFrontMatter], which a caller that requires front matter reports
// and one that does not ignores. A UTF-8 byte order mark and CRLF line
// ends are accepted.
func Parse(data []byte) (Document, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	first, rest, _ := bytes.Cut(data, []byte("\n"))
	if string(bytes.TrimRight(first, " \t\r")) != "---" {
		return Document{Body: string(data), BodyLine: 1}, ErrNoFrontMatter
	}
	// Find the closing line; the YAML is everything before it.
	line := 2
	yamlEnd, bodyStart := -1, -1
	for off := 0; off <= len(rest); {
		l, _, found := bytes.Cut(rest[off:], []byte("\n"))
		if t := string(bytes.TrimRight(l, " \t\r")); t == "---" || t == "..." {
			yamlEnd = off
			bodyStart = off + len(l)
			if found {
				bodyStart++
			}
			break
		}
		if !found {
			break
		}
		off += len(l) + 1
		line++
	}
	if yamlEnd < 0 {
		return Document{}, &Error{Line: 1, Column: 1, Err: errors.New("the front matter has no closing --- line")}
	}
	doc := Document{Body: string(rest[bodyStart:]), BodyLine: line + 1}
	var root yaml.Node
	if err := yaml.Unmarshal(rest[:yamlEnd], &root); err != nil {
		return Document{}, yamlError(err)
	}
	if len(root.Content) == 0 {
		return doc, nil // empty front matter
	}
	m := root.Content[0]
	if m.Kind != yaml.MappingNode {
		return Document{}, &Error{Line: m.Line + 1, Column: m.Column, Err: errors.New("the front matter must be a mapping of keys to values")}
	}
	seen := make(map[string]int, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		f := Field{Key: k.Value, Line: k.Line + 1, Column: k.Column, Value: v}
		if k.Kind != yaml.ScalarNode {
			return Document{}, &Error{Line: f.Line, Column: f.Column, Err: errors.New("a key must be a plain name")}
		}
		if prev, dup := seen[f.Key]; dup {
			return Document{}, &Error{Line: f.Line, Column: f.Column, Key: f.Key, Err: fmt.Errorf("given twice (first on line %d)", prev)}
		}
		seen[f.Key] = f.Line
		doc.Fields = append(doc.Fields, f)
	}
	return doc, nil
}

// yamlError turns the YAML library's error into an [*Error] on the file's
// lines (the front matter starts on line 2).
func yamlError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, tail, ok := strings.Cut(rest, ":"); ok {
			if l, cerr := strconv.Atoi(n); cerr == nil {
				return &Error{Line: l + 1, Column: 1, Err: errors.New("invalid YAML:" + tail)}
			}
		}
	}
	return &Error{Line: 2, Column: 1, Err: errors.New("invalid YAML: " + msg)}
}

// Errorf returns an [*Error] at f's key.
func (f Field) Errorf(format string, args ...any) *Error {
	return &Error{Line: f.Line, Column: f.Column, Key: f.Key, Err: fmt.Errorf(format, args...)}
}

// String returns a scalar value as text.
func (f Field) String() (string, error) {
	if f.Value.Kind != yaml.ScalarNode || f.Value.Tag == "!!null" {
		return "", f.Errorf("want a string")
	}
	return f.Value.Value, nil
}

// Int returns a non-negative integer value.
func (f Field) Int() (int, error) {
	if f.Value.Kind != yaml.ScalarNode || f.Value.Tag != "!!int" {
		return 0, f.Errorf("want a whole number, not %q", f.Value.Value)
	}
	n, err := strconv.ParseInt(f.Value.Value, 0, 64)
	if err != nil || n < 0 || n > math.MaxInt32 {
		return 0, f.Errorf("want a whole number from 0 to %d, not %s", math.MaxInt32, f.Value.Value)
	}
	return int(n), nil
}

// Bool returns a true or false value.
func (f Field) Bool() (bool, error) {
	if f.Value.Kind != yaml.ScalarNode || f.Value.Tag != "!!bool" {
		return false, f.Errorf("want true or false, not %q", f.Value.Value)
	}
	b, err := strconv.ParseBool(strings.ToLower(f.Value.Value))
	if err != nil {
		return false, f.Errorf("want true or false, not %q", f.Value.Value)
	}
	return b, nil
}

// List returns a YAML sequence of strings, or a string of items separated
// by commas (Claude Code's form); items are trimmed and empty ones
// dropped.
func (f Field) List() ([]string, error) {
	var out []string
	switch f.Value.Kind {
	case yaml.ScalarNode:
		if f.Value.Tag == "!!null" {
			return nil, nil
		}
		for item := range strings.SplitSeq(f.Value.Value, ",") {
			if item = strings.TrimSpace(item); item != "" {
				out = append(out, item)
			}
		}
	case yaml.SequenceNode:
		for _, n := range f.Value.Content {
			if n.Kind != yaml.ScalarNode {
				return nil, f.Errorf("want a list of names")
			}
			if item := strings.TrimSpace(n.Value); item != "" {
				out = append(out, item)
			}
		}
	default:
		return nil, f.Errorf("want a list of names or a comma-separated string")
	}
	return out, nil
}

// IsString reports whether the value is a plain scalar string (not a
// mapping, list or number).
func (f Field) IsString() bool {
	return f.Value.Kind == yaml.ScalarNode && f.Value.Tag == "!!str"
}

// JSON returns the value as JSON: a mapping becomes an object, a
// sequence an array, a scalar what its YAML type says (a string, a
// number, true or false, null). It walks the parsed nodes: converting
// through Go values would cost reflection for every node.
func (f Field) JSON() (json.RawMessage, error) {
	var b bytes.Buffer
	if err := writeJSON(&b, f.Value, 0); err != nil {
		return nil, f.Errorf("%v", err)
	}
	return b.Bytes(), nil
}

// maxJSONDepth bounds the nesting JSON follows (and alias loops).
const maxJSONDepth = 64

func writeJSON(b *bytes.Buffer, n *yaml.Node, depth int) error {
	if depth > maxJSONDepth {
		return errors.New("nested too deeply")
	}
	switch n.Kind {
	case yaml.AliasNode:
		return writeJSON(b, n.Alias, depth+1)
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			b.WriteString("null")
			return nil
		}
		return writeJSON(b, n.Content[0], depth+1)
	case yaml.MappingNode:
		b.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: a key must be a plain name", k.Line+1)
			}
			writeString(b, k.Value)
			b.WriteByte(':')
			if err := writeJSON(b, n.Content[i+1], depth+1); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeJSON(b, c, depth+1); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			b.WriteString("null")
		case "!!bool":
			var v bool
			if err := n.Decode(&v); err != nil {
				return err
			}
			b.WriteString(strconv.FormatBool(v))
		case "!!int", "!!float":
			var v float64
			if err := n.Decode(&v); err != nil {
				return err
			}
			if math.IsInf(v, 0) || math.IsNaN(v) {
				return fmt.Errorf("line %d: %s is not a JSON number", n.Line+1, n.Value)
			}
			b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		default:
			writeString(b, n.Value)
		}
	default:
		return fmt.Errorf("line %d: a value JSON cannot hold", n.Line+1)
	}
	return nil
}

func writeString(b *bytes.Buffer, s string) {
	q, _ := json.Marshal(s) // a string always encodes
	b.Write(q)
}
