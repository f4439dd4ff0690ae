// This file reads the config file and walks its JSON keeping the offset of
// every key and value, so that a mistake can be reported at line:column.

package config

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/dshd/dshd/internal/suggest"
)

// file is a config file that parsed as JSON.
type file struct {
	path string
	data []byte
}

// member is one value of a JSON object or array, with its key in an
// object.
type member struct {
	key            string
	keyOff, valOff int // offsets in the file (keyOff: objects only)
	raw            json.RawMessage
}

// position returns the 1-based line and column (in bytes) of offset off.
func (f *file) position(off int) (line, col int) {
	off = min(max(off, 0), len(f.data))
	before := f.data[:off]
	line = 1 + bytes.Count(before, []byte("\n"))
	return line, off - bytes.LastIndexByte(before, '\n')
}

// parseFile checks that data is one JSON object and returns its members.
func parseFile(path string, data []byte) (*file, []member, error) {
	f := &file{path: path, data: data}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			// Offset counts the offending byte.
			return nil, nil, fromFile(f, int(se.Offset)-1, "", nil).errorf("JSON syntax: %s", se)
		}
		return nil, nil, fromFile(f, 0, "", nil).errorf("JSON: %s", err)
	}
	start := skip(data, 0)
	if _, ok := v.(map[string]any); !ok {
		return nil, nil, fromFile(f, start, "", nil).errorf("want a JSON object of settings")
	}
	return f, f.elements(data[start:], start), nil
}

// elements lists the values of the object or array raw, found at offset
// base, with their keys in an object. raw is valid JSON (the whole file
// was checked), so the decoder cannot fail.
func (f *file) elements(raw []byte, base int) []member {
	dec := json.NewDecoder(bytes.NewReader(raw))
	open, err := dec.Token()
	if err != nil {
		return nil
	}
	var out []member
	for dec.More() {
		var m member
		if open == json.Delim('{') {
			m.keyOff = base + skip(raw, int(dec.InputOffset()))
			tok, err := dec.Token()
			if err != nil {
				return out
			}
			m.key, _ = tok.(string)
		}
		m.valOff = base + skip(raw, int(dec.InputOffset()))
		if err := dec.Decode(&m.raw); err != nil {
			return out
		}
		out = append(out, m)
	}
	return out
}

// skip returns the offset of the next byte of data at or after off that
// is not white space or a separator.
func skip(data []byte, off int) int {
	for off < len(data) {
		switch data[off] {
		case ' ', '\t', '\n', '\r', ',', ':':
			off++
		default:
			return off
		}
	}
	return off
}

// unique reports the first key given twice.
func unique(f *file, ms []member, prefix string) error {
	seen := map[string]member{}
	for _, m := range ms {
		if first, ok := seen[m.key]; ok {
			line, col := f.position(first.keyOff)
			return fromFile(f, m.keyOff, prefix+m.key, nil).errorf("given twice (first at %d:%d)", line, col)
		}
		seen[m.key] = m
	}
	return nil
}

// object checks that a member's value is a JSON object.
func (f *file) object(m member, name string) ([]member, error) {
	if len(m.raw) == 0 || m.raw[0] != '{' {
		return nil, fromFile(f, m.valOff, name, m.raw).errorf("want an object")
	}
	ms := f.elements(m.raw, m.valOff)
	if err := unique(f, ms, name+"."); err != nil {
		return nil, err
	}
	return ms, nil
}

// unknownKey is the error for a key no setting has; in names the object
// it is in ("" for the top level).
func unknownKey(f *file, m member, in string, known []string) error {
	if in != "" {
		in += ": "
	}
	return fromFile(f, m.keyOff, "", nil).errorf("%sunknown key %q%s", in, m.key, suggest.DidYouMean(m.key, known))
}
