// mirror.go: the one encoder and decoder behind the types that need their
// own MarshalJSON or UnmarshalJSON. Such a method cannot hand its value to
// encoding/json (that would call the method again), so it hands over a
// mirror: a struct type with the same fields and none of the methods, in
// which the members that follow their own rule are raw JSON.

package acp

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/dshd/dshd/acp/internal/jsontext"
)

// mirrorKey names a mirror: the mirrored type and its raw members' keys.
type mirrorKey struct {
	t   reflect.Type
	raw string
}

var mirrors sync.Map // mirrorKey → reflect.Type

var rawSpanType = reflect.TypeFor[rawSpan]()

// mirrorOf returns the struct type with the fields of the struct type t,
// tags included, and no methods; the fields whose JSON key is in raw are
// rawSpan instead. Mirrors are built once per type and key set.
func mirrorOf(t reflect.Type, raw []string) reflect.Type {
	key := mirrorKey{t, strings.Join(raw, ",")}
	if m, ok := mirrors.Load(key); ok {
		return m.(reflect.Type)
	}
	fields := make([]reflect.StructField, t.NumField())
	for i := range fields {
		f := t.Field(i)
		fields[i] = reflect.StructField{Name: f.Name, Type: f.Type, Tag: f.Tag}
		if slices.Contains(raw, jsonKey(f)) {
			fields[i].Type = rawSpanType
		}
	}
	m, _ := mirrors.LoadOrStore(key, reflect.StructOf(fields))
	return m.(reflect.Type)
}

// jsonKey is the member name a struct field is encoded under.
func jsonKey(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		return f.Name
	}
	return name
}

// fieldsOf returns v seen as its mirror, for encoding/json to encode v's
// fields without v's own MarshalJSON. The mirror has v's layout, field by
// field, so v's memory is read as one; a reflect Convert would compare the
// two types field by field on every call.
func fieldsOf[T any](v T) any {
	return reflect.NewAt(mirrorOf(reflect.TypeFor[T](), nil), unsafe.Pointer(&v)).Interface()
}

// marshalVariant is the MarshalJSON of a union variant: v's fields behind
// `"key":"tag"`.
func marshalVariant[T any](key, tag string, v T) ([]byte, error) {
	return marshalTagged(key, tag, fieldsOf(v))
}

// marshalFields is the MarshalJSON of a type that only fixes a field
// before encoding (a required list sent as [] rather than null).
func marshalFields[T any](v T) ([]byte, error) { return json.Marshal(fieldsOf(v)) }

// member is a member of an object that decodeObject leaves to its own
// rule: it gets the member's raw JSON (nil when absent) and sets the field.
type member struct {
	key    string
	decode func(raw []byte, field reflect.Value) error
}

// memberOf is the member key decoded by dec; a failure fails the object.
func memberOf[V any](key string, dec func([]byte) (V, error)) member {
	return member{key, func(raw []byte, field reflect.Value) error {
		v, err := dec(raw)
		if err != nil {
			return err
		}
		*field.Addr().Interface().(*V) = v
		return nil
	}}
}

// unionMember is a union-valued member (decodeOne): absent or null is
// nil, a failure names the member.
func unionMember[U any](key string, dec func([]byte) (U, error)) member {
	return memberOf(key, func(raw []byte) (U, error) { return decodeOne(key, raw, dec) })
}

// listMember is a list whose bad items are dropped; a value that is not a
// list fails the object.
func listMember[E any](key string, dec func([]byte) (E, error)) member {
	return memberOf(key, func(raw []byte) ([]E, error) { return decodeList(raw, dec, true) })
}

// lenientList is a list whose bad items are dropped and which is absent
// when it is not a list (acp-v1 §4).
func lenientList[E any](key string, dec func([]byte) (E, error)) member {
	return memberOf(key, func(raw []byte) ([]E, error) {
		l, _ := decodeList(raw, dec, true)
		return l, nil
	})
}

// lenientString is a string-valued member that is absent when malformed
// (acp-v1 §4).
func lenientString[S ~string](key string) member {
	return memberOf(key, func(raw []byte) (S, error) {
		s, _ := jsontext.String(raw)
		return S(s), nil
	})
}

// optionalMember is a pointer member that is absent when malformed
// (decodeOptional).
func optionalMember[T any](key string) member {
	return memberOf(key, func(raw []byte) (*T, error) { return decodeOptional[T](raw), nil })
}

// objectDecoder is the UnmarshalJSON of a type T with members: the
// object is decoded into T's mirror with encoding/json, then each member
// by its rule, in order. Declare one per type, as a package variable: the
// mirror is built at the first decode.
type objectDecoder[T any] struct {
	members []member
	plan    func() objectPlan
}

// objectPlan is where an objectDecoder finds things: the mirror type, and
// for each member the index of its field (the same in T and the mirror).
type objectPlan struct {
	mirror reflect.Type
	fields []int
}

func newObjectDecoder[T any](members ...member) *objectDecoder[T] {
	d := &objectDecoder[T]{members: members}
	d.plan = sync.OnceValue(func() objectPlan {
		t := reflect.TypeFor[T]()
		keys := make([]string, len(members))
		for i, m := range members {
			keys[i] = m.key
		}
		p := objectPlan{mirror: mirrorOf(t, keys), fields: make([]int, len(members))}
		for i := range t.NumField() {
			if k := slices.Index(keys, jsonKey(t.Field(i))); k >= 0 {
				p.fields[k] = i
			}
		}
		return p
	})
	return d
}

// decode decodes the object b into *v, which is changed only when every
// member decoded.
func (d *objectDecoder[T]) decode(b []byte, v *T) error {
	p := d.plan()
	w := reflect.New(p.mirror).Elem()
	if err := json.Unmarshal(b, w.Addr().Interface()); err != nil {
		return err
	}
	var out T
	o := reflect.ValueOf(&out).Elem()
	for i := range o.NumField() {
		if !slices.Contains(p.fields, i) {
			o.Field(i).Set(w.Field(i))
		}
	}
	for k, m := range d.members {
		i := p.fields[k]
		if err := m.decode(w.Field(i).Bytes(), o.Field(i)); err != nil {
			return err
		}
	}
	*v = out
	return nil
}
