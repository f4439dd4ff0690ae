// This file explains a strict schema failure: it walks a message beside
// its schema definition and names each key the definition does not
// define, with the definition that would have to define it, so that a
// finding reads "agentCapabilities.mcpCapabilities.acp is not defined by
// McpCapabilities" instead of a chain of schema pointers.

package conformance

import (
	"fmt"
	"slices"
	"strings"
)

// unknownKey is a key of a message that its schema does not define.
type unknownKey struct {
	// path is the key's place in the message ("agentCapabilities.mcpCapabilities.acp").
	path string
	// def is the definition whose object holds the key ("McpCapabilities").
	def string
}

// schemaNode is one schema object that applies at a place in the message,
// with its JSON pointer (to validate it alone) and the definition it
// belongs to.
type schemaNode struct {
	m   map[string]any
	ptr string
	def string
}

type keyWalker struct {
	d   *schemaDoc
	out []unknownKey
}

// unknownKeys lists the keys of v, at any depth, that definition def does
// not define. It follows $ref, allOf, and the anyOf/oneOf branches v
// validates against; _meta and objects with additionalProperties are
// open. An object schema without properties is open too, as the strict
// check (tighten) leaves it.
func (d *schemaDoc) unknownKeys(def string, v any) []unknownKey {
	defs, _ := d.raw["$defs"].(map[string]any)
	root, ok := defs[def].(map[string]any)
	if !ok {
		return nil
	}
	w := &keyWalker{d: d}
	w.walk(w.expand([]schemaNode{{m: root, ptr: "#/$defs/" + def, def: def}}, v), v, "")
	return w.out
}

// expand returns the nodes that apply to v: each node, what its $ref
// points to, its allOf members, and the anyOf/oneOf members v validates
// against, recursively.
func (w *keyWalker) expand(ns []schemaNode, v any) []schemaNode {
	var out []schemaNode
	for _, n := range ns {
		w.apply(n, v, &out, 0)
	}
	return out
}

func (w *keyWalker) apply(n schemaNode, v any, out *[]schemaNode, depth int) {
	if depth > 64 {
		return // a cycle of references; the validator reports those
	}
	*out = append(*out, n)
	if ref, ok := n.m["$ref"].(string); ok {
		if name, ok := strings.CutPrefix(ref, "#/$defs/"); ok {
			defs, _ := w.d.raw["$defs"].(map[string]any)
			if m, ok := defs[name].(map[string]any); ok {
				w.apply(schemaNode{m: m, ptr: ref, def: name}, v, out, depth+1)
			}
		}
	}
	for i, s := range schemaList(n.m["allOf"]) {
		w.apply(schemaNode{m: s, ptr: fmt.Sprintf("%s/allOf/%d", n.ptr, i), def: n.def}, v, out, depth+1)
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		for i, s := range schemaList(n.m[kw]) {
			ptr := fmt.Sprintf("%s/%s/%d", n.ptr, kw, i)
			if w.d.validates(ptr, v) {
				w.apply(schemaNode{m: s, ptr: ptr, def: n.def}, v, out, depth+1)
			}
		}
	}
}

func schemaList(v any) []map[string]any {
	list, _ := v.([]any)
	var out []map[string]any
	for _, it := range list {
		if m, ok := it.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// walk checks the keys of v against the nodes that apply to it.
func (w *keyWalker) walk(ns []schemaNode, v any, path string) {
	switch v := v.(type) {
	case map[string]any:
		props := map[string][]schemaNode{}
		var extra []schemaNode
		hasProps, open := false, false
		holder := ""
		for _, n := range ns {
			if p, ok := n.m["properties"].(map[string]any); ok {
				hasProps = true
				holder = n.def
				for k, ps := range p {
					if pm, ok := ps.(map[string]any); ok {
						props[k] = append(props[k], schemaNode{m: pm, ptr: n.ptr + "/properties/" + pointerEscape(k), def: n.def})
					}
				}
			}
			switch ap := n.m["additionalProperties"].(type) {
			case bool:
				open = open || ap
			case map[string]any:
				open = true
				extra = append(extra, schemaNode{m: ap, ptr: n.ptr + "/additionalProperties", def: n.def})
			}
		}
		open = open || !hasProps
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if k == "_meta" {
				continue
			}
			p := k
			if path != "" {
				p = path + "." + k
			}
			switch pn, known := props[k]; {
			case known:
				w.walk(w.expand(pn, v[k]), v[k], p)
			case len(extra) > 0:
				w.walk(w.expand(extra, v[k]), v[k], p)
			case !open:
				w.out = append(w.out, unknownKey{path: p, def: holder})
			}
		}
	case []any:
		var items []schemaNode
		for _, n := range ns {
			if it, ok := n.m["items"].(map[string]any); ok {
				items = append(items, schemaNode{m: it, ptr: n.ptr + "/items", def: n.def})
			}
		}
		if len(items) == 0 {
			return
		}
		for i, e := range v {
			w.walk(w.expand(items, e), e, fmt.Sprintf("%s[%d]", path, i))
		}
	}
}

// pointerEscape escapes a key for a JSON pointer (RFC 6901).
func pointerEscape(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// validates reports whether v validates, loosely, against the schema at
// the JSON pointer ptr.
func (d *schemaDoc) validates(ptr string, v any) bool {
	r, err := d.validatorRef(ptr, false)
	return err == nil && r.Validate(v) == nil
}

// schemaRule shortens a validator error to the innermost rule it names
// ("/$defs/McpCapabilities/unevaluatedProperties: not: …").
func schemaRule(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, "validating "); i >= 0 {
		s = s[i+len("validating "):]
	}
	return s
}
