// json.go: shared JSON machinery — _meta, tri-state patches, request ids,
// tagged-union helpers and lenient decoding (acp-v1 §4, §22).

package acp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/dshd/dshd/acp/internal/jsontext"
)

// Meta is the free-form `_meta` object every ACP type may carry (acp-v1 §22).
// A `_meta` that is not an object decodes as absent, as the schema asks.
type Meta map[string]any

// UnmarshalJSON implements json.Unmarshaler leniently.
func (m *Meta) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		*m = nil
		return nil
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		*m = nil
		return nil
	}
	*m = v
	return nil
}

type patchState uint8

const (
	patchOmitted patchState = iota
	patchNull
	patchSet
)

// Patch is a field with patch semantics (acp-subagents §3, acp-v1 §10.10):
// omitted means keep the stored value, null means clear it, a value replaces
// it. The zero Patch is omitted; use it with the `omitzero` tag option.
type Patch[T any] struct {
	v     T
	state patchState
}

// Set returns a Patch that replaces the stored value with v.
func Set[T any](v T) Patch[T] { return Patch[T]{v: v, state: patchSet} }

// Null returns a Patch that clears the stored value (JSON null).
func Null[T any]() Patch[T] { return Patch[T]{state: patchNull} }

// IsZero reports whether p is omitted; it drives `omitzero`.
func (p Patch[T]) IsZero() bool { return p.state == patchOmitted }

// IsOmitted reports whether the field was left out (keep the stored value).
func (p Patch[T]) IsOmitted() bool { return p.state == patchOmitted }

// IsNull reports whether the field was null (clear the stored value).
func (p Patch[T]) IsNull() bool { return p.state == patchNull }

// IsSet reports whether the field carries a value.
func (p Patch[T]) IsSet() bool { return p.state == patchSet }

// Get returns the value and whether one is set.
func (p Patch[T]) Get() (T, bool) { return p.v, p.state == patchSet }

// MarshalJSON implements json.Marshaler; an omitted Patch marshals as null,
// so always tag Patch fields `omitzero`.
func (p Patch[T]) MarshalJSON() ([]byte, error) {
	if p.state != patchSet {
		return []byte("null"), nil
	}
	return json.Marshal(p.v)
}

// UnmarshalJSON implements json.Unmarshaler.
func (p *Patch[T]) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		*p = Patch[T]{state: patchNull}
		return nil
	}
	var v T
	if err := decodeValue(b, &v); err != nil {
		return err
	}
	*p = Patch[T]{v: v, state: patchSet}
	return nil
}

// decodeValue decodes b into *dst, routing union types to their decoders
// (encoding/json cannot fill an interface).
func decodeValue[T any](b []byte, dst *T) error {
	switch p := any(dst).(type) {
	case *ContentBlock:
		v, err := UnmarshalContentBlock(b)
		*p = v
		return err
	case *[]ContentBlock:
		v, err := decodeList(b, UnmarshalContentBlock, false)
		*p = v
		return err
	case *StateUpdate:
		v, err := UnmarshalStateUpdate(b)
		*p = v
		return err
	default:
		return json.Unmarshal(b, dst)
	}
}

// rawSpan is a json.RawMessage for the wire structs of UnmarshalJSON
// methods: it aliases the decoder's input instead of copying it, so a
// large member is decoded further where it lies. It is only valid while
// that UnmarshalJSON runs.
type rawSpan []byte

// UnmarshalJSON implements json.Unmarshaler without a copy.
func (r *rawSpan) UnmarshalJSON(b []byte) error {
	*r = b
	return nil
}

func isNull(b []byte) bool { return string(bytes.TrimSpace(b)) == "null" }

// RequestID is a JSON-RPC request id: a string, an integer or null (acp-v1
// §3). It keeps the id's JSON type, so "7" and 7 differ. The zero RequestID is
// absent; use the `omitzero` tag option.
type RequestID struct {
	raw string // canonical JSON text; "" when absent
}

// IntRequestID returns the integer id n.
func IntRequestID(n int64) RequestID { return RequestID{raw: strconv.FormatInt(n, 10)} }

// IsZero reports whether the id is absent.
func (id RequestID) IsZero() bool { return id.raw == "" }

// String returns the id's canonical JSON text (`7`, `"7"`, `null`).
func (id RequestID) String() string { return id.raw }

// MarshalJSON implements json.Marshaler.
func (id RequestID) MarshalJSON() ([]byte, error) {
	if id.raw == "" {
		return []byte("null"), nil
	}
	return []byte(id.raw), nil
}

// UnmarshalJSON implements json.Unmarshaler; it accepts a string, an integer
// or null.
func (id *RequestID) UnmarshalJSON(b []byte) error {
	key, ok := idKey(bytes.TrimSpace(b))
	if !ok {
		return &badValueError{reason: "must be a string, an integer or null"}
	}
	id.raw = key
	return nil
}

// idKey returns the canonical text of a raw JSON id: strings re-encoded,
// integers as written, null. It fails for every other value, including
// fractional numbers.
func idKey(raw []byte) (string, bool) {
	switch {
	case len(raw) == 0:
		return "", false
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", false
		}
		b, _ := json.Marshal(s)
		return string(b), true
	case string(raw) == "null":
		return "null", true
	case jsontext.IsInteger(raw):
		return string(raw), true
	}
	return "", false
}

// encPool holds encoders that do not escape HTML: what goes on the wire is
// the exact text, and the session/update fast path produces the same bytes.
var encPool = sync.Pool{New: func() any {
	e := new(pooledEncoder)
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	return e
}}

type pooledEncoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

// putEncoder returns e to encPool unless its buffer grew too large to keep.
func putEncoder(e *pooledEncoder) {
	if e.buf.Cap() <= 64<<10 {
		encPool.Put(e)
	}
}

// marshalTagged marshals v (a method-less alias of a union variant) and puts
// `"key":"tag"` first, so every variant emits its own discriminator.
func marshalTagged(key, tag string, v any) ([]byte, error) {
	e := encPool.Get().(*pooledEncoder)
	defer putEncoder(e)
	e.buf.Reset()
	if err := e.enc.Encode(v); err != nil {
		return nil, err
	}
	body := bytes.TrimSuffix(e.buf.Bytes(), []byte("\n"))
	out := make([]byte, 0, len(body)+len(key)+len(tag)+8)
	out = append(out, '{', '"')
	out = append(out, key...)
	out = append(out, `":"`...)
	out = append(out, tag...)
	out = append(out, '"')
	if len(body) > 2 { // not "{}"
		out = append(out, ',')
		out = append(out, body[1:]...)
	} else {
		out = append(out, '}')
	}
	return out, nil
}

// marshalUnknown is the MarshalJSON of a variant whose tag this package
// does not know: the object as it was received, or just `"key":"tag"` for
// one built without it.
func marshalUnknown(key, tag string, raw json.RawMessage) ([]byte, error) {
	if len(raw) > 0 {
		return raw, nil
	}
	return marshalTagged(key, tag, struct{}{})
}

// readTag returns the string value of key in the JSON object b, and whether
// the key was present with a string value. It scans without allocating.
func readTag(b []byte, key string) (tag string, ok bool, err error) {
	var raw []byte
	err = jsontext.ScanObject(b, func(k, v []byte) bool {
		if jsontext.KeyIs(k, key) {
			raw = v
		}
		return true
	})
	if err != nil {
		return "", false, &badValueError{reason: "must be an object"}
	}
	if raw == nil {
		return "", false, nil
	}
	tag, ok = jsontext.String(raw)
	if !ok {
		return "", false, &badValueError{key: key, reason: "must be a string"}
	}
	return tag, true, nil
}

// decodeList decodes a JSON array with an element decoder. null and absent
// give nil, [] gives an empty non-nil slice. With skipInvalid, elements that
// fail to decode are dropped (schema x-deserialize-skip-invalid-items)
// instead of failing the whole list.
func decodeList[T any](b []byte, dec func([]byte) (T, error), skipInvalid bool) ([]T, error) {
	if len(b) == 0 || isNull(b) {
		return nil, nil
	}
	// The elements are decoded where they lie: a 50 MB prompt block is not
	// copied into a json.RawMessage first.
	out := []T{}
	var failed error
	i := 0
	err := jsontext.ScanArray(b, func(elem []byte) bool {
		v, err := dec(elem)
		switch {
		case err == nil:
			out = append(out, v)
		case !skipInvalid:
			failed = &elementError{index: i, err: err}
			return false
		}
		i++
		return true
	})
	if err != nil {
		// Not an array, or a broken one: encoding/json's error says what
		// was found, in terms the params error can word.
		var raws []json.RawMessage
		if uerr := json.Unmarshal(b, &raws); uerr != nil {
			return nil, uerr
		}
		return nil, fmt.Errorf("acp: malformed list: %w", err)
	}
	if failed != nil {
		return nil, failed
	}
	return out, nil
}

// emptyIfNil returns s, or an empty slice when s is nil: a required list is
// sent as [] rather than null.
func emptyIfNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// decodeJSON decodes b with encoding/json; it is the element decoder of
// decodeList for types that are not unions.
func decodeJSON[T any](b []byte) (v T, err error) {
	err = json.Unmarshal(b, &v)
	return v, err
}

// decodeOptional decodes an optional member leniently: absent, null or
// malformed gives nil (acp-v1 §4).
func decodeOptional[T any](b []byte) *T {
	if len(b) == 0 || isNull(b) {
		return nil
	}
	v := new(T)
	if json.Unmarshal(b, v) != nil {
		return nil
	}
	return v
}

// decodeOne decodes the single union member key; absent or null gives the
// zero value. A failure names the member.
func decodeOne[T any](key string, b []byte, dec func([]byte) (T, error)) (T, error) {
	var zero T
	if len(b) == 0 || isNull(b) {
		return zero, nil
	}
	v, err := dec(b)
	if err != nil {
		return zero, &memberError{key: key, err: err}
	}
	return v, nil
}

// decodeLenient decodes the JSON object b into the struct *v field by field,
// leaving a field at its zero value when its JSON is malformed: the receiver
// leniency acp-v1 §4 asks for on capability objects. b that is not an object
// leaves *v zero. It never fails, so a capability's UnmarshalJSON is just
// `return decodeLenient(b, c)`; it does not call v's own UnmarshalJSON.
func decodeLenient[T any](b []byte, v *T) error {
	rv := reflect.ValueOf(v).Elem()
	rv.SetZero()
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	rt := rv.Type()
	for i := range rt.NumField() {
		f := rt.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		raw, ok := m[name]
		if !ok {
			continue
		}
		fv := rv.Field(i)
		p := reflect.New(fv.Type())
		if json.Unmarshal(raw, p.Interface()) == nil {
			fv.Set(p.Elem())
		}
	}
	return nil
}

// taggedUnion is the decoder of a sealed union whose variants carry a string
// discriminator: readTag finds the tag, variants gives the variant to decode
// the whole object into.
type taggedUnion[U any] struct {
	name     string              // for errors, e.g. "content block"
	key      string              // the discriminator, e.g. "type"
	variants map[string]func() U // a new variant (a pointer) for each tag
	// untagged, when set, is the variant of an object without the key;
	// otherwise a missing key is an error.
	untagged func() U
	// unknown, when set, is the value of an unknown tag, given the tag and
	// a copy of the whole object to keep (see marshalUnknown); otherwise an
	// unknown tag is an error.
	unknown func(tag string, raw json.RawMessage) U
	// tagErrors prefixes a variant's decoding error with its tag.
	tagErrors bool
}

// decode decodes b as the variant its tag selects.
func (u *taggedUnion[U]) decode(b []byte) (U, error) {
	var zero U
	tag, ok, err := readTag(b, u.key)
	if err != nil {
		return zero, err
	}
	mk := u.untagged
	if ok {
		mk = u.variants[tag]
		if mk == nil && u.unknown != nil {
			return u.unknown(tag, bytes.Clone(b)), nil
		}
	}
	if mk == nil {
		return zero, &unionTagError{union: u.name, key: u.key, tag: tag, present: ok, known: slices.Sorted(maps.Keys(u.variants))}
	}
	v := mk()
	if err := json.Unmarshal(b, v); err != nil {
		if u.tagErrors {
			err = &taggedError{tag: tag, err: err}
		}
		return zero, err
	}
	return v, nil
}
