// This file validates the agent's messages against the official ACP JSON
// schema (schema/v1/schema.json and schema.unstable.json of the npm
// package @agentclientprotocol/sdk) with github.com/google/jsonschema-go,
// once as published and once in a strict form that refuses keys the
// schema does not name (acp-v1#76).

package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// SchemaSet validates messages against the stable schema and, for the
// subagent additions, the unstable one.
type SchemaSet struct {
	stable, unstable *schemaDoc
}

type schemaDoc struct {
	name string
	raw  map[string]any
	// defs and strictDefs are the $defs as published and tightened,
	// encoded: each validator decodes its own schema from them, since a
	// resolved schema must not share maps with another.
	defs, strictDefs json.RawMessage
	// byMethod maps "method/kind" (kind: request, response,
	// notification) to a $defs name.
	byMethod map[string]string

	mu    sync.Mutex
	cache map[string]*jsonschema.Resolved // JSON pointer (+ "!strict") → validator
}

// LoadSchemas reads schema.json and schema.unstable.json from dir (the
// package's schema/v1 directory).
func LoadSchemas(dir string) (*SchemaSet, error) {
	stable, err := loadSchemaDoc(filepath.Join(dir, "schema.json"))
	if err != nil {
		return nil, err
	}
	unstable, err := loadSchemaDoc(filepath.Join(dir, "schema.unstable.json"))
	if err != nil {
		return nil, err
	}
	return &SchemaSet{stable: stable, unstable: unstable}, nil
}

func loadSchemaDoc(path string) (*schemaDoc, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defs, _ := raw["$defs"].(map[string]any)
	if len(defs) == 0 {
		return nil, fmt.Errorf("%s: no $defs", path)
	}
	d := &schemaDoc{name: filepath.Base(path), raw: raw, byMethod: map[string]string{}, cache: map[string]*jsonschema.Resolved{}}
	if d.defs, err = json.Marshal(defs); err != nil {
		return nil, err
	}
	// tighten changes what it is given: a second decoding of the file.
	var again struct {
		Defs map[string]any `json:"$defs"`
	}
	if err := json.Unmarshal(b, &again); err != nil {
		return nil, err
	}
	tighten(again.Defs)
	if d.strictDefs, err = json.Marshal(again.Defs); err != nil {
		return nil, err
	}
	for name, def := range defs {
		m, _ := def.(map[string]any)
		method, _ := m["x-method"].(string)
		if method == "" {
			continue
		}
		switch {
		case strings.HasSuffix(name, "Request"):
			d.byMethod[method+"/request"] = name
		case strings.HasSuffix(name, "Response"):
			d.byMethod[method+"/response"] = name
		case strings.HasSuffix(name, "Notification"):
			d.byMethod[method+"/notification"] = name
		}
	}
	return d, nil
}

// validator returns the resolved schema of one definition.
func (d *schemaDoc) validator(def string, strict bool) (*jsonschema.Resolved, error) {
	return d.validatorRef("#/$defs/"+def, strict)
}

// validatorRef returns the resolved schema at a JSON pointer into the
// document ("#/$defs/AuthMethod/anyOf/1").
func (d *schemaDoc) validatorRef(ref string, strict bool) (*jsonschema.Resolved, error) {
	key := ref
	if strict {
		key += "!strict"
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if r, ok := d.cache[key]; ok {
		return r, nil
	}
	defs := d.defs
	if strict {
		defs = d.strictDefs
	}
	root := map[string]any{"$schema": d.raw["$schema"], "$ref": ref, "$defs": defs}
	b, err := json.Marshal(root)
	if err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", d.name, ref, err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("%s: resolving %s: %w", d.name, ref, err)
	}
	d.cache[key] = r
	return r, nil
}

// tighten adds unevaluatedProperties: false so that keys the schema does
// not name are refused. Definitions that other object schemas pull in
// with allOf next to their own properties ("mixins", such as ToolCall
// inside the tool_call variant) stay open themselves: the including
// schema is tightened instead, and it sees the mixin's properties through
// the allOf. Wrappers that only point at a mixin are tightened too.
func tighten(defs map[string]any) {
	mixins := map[string]bool{}
	var find func(n any)
	find = func(n any) {
		switch n := n.(type) {
		case map[string]any:
			if _, ok := n["properties"]; ok {
				for _, r := range refsIn(n["allOf"]) {
					mixins[r] = true
				}
			}
			for _, v := range n {
				find(v)
			}
		case []any:
			for _, v := range n {
				find(v)
			}
		}
	}
	find(defs)
	// mark tightens n; under says n is composed (allOf, oneOf, anyOf)
	// into a schema that has properties of its own, which is then the one
	// that sees every evaluated key and gets tightened instead.
	var mark func(n any, def string, under bool)
	mark = func(n any, def string, under bool) {
		switch n := n.(type) {
		case map[string]any:
			_, hasProps := n["properties"]
			_, hasUneval := n["unevaluatedProperties"]
			refs := refsIn(n["allOf"])
			wrapsMixin := !hasProps && len(refs) == 1 && mixins[refs[0]]
			if !under && !hasUneval && ((hasProps && !mixins[def]) || wrapsMixin) {
				if ap, ok := n["additionalProperties"]; !ok || ap == false {
					n["unevaluatedProperties"] = false
				}
			}
			for k, v := range n {
				switch k {
				case "properties":
					if props, ok := v.(map[string]any); ok {
						for _, p := range props {
							mark(p, "", false)
						}
					}
				case "allOf", "oneOf", "anyOf":
					mark(v, "", under || hasProps)
				case "const", "default", "enum":
				default:
					mark(v, "", false)
				}
			}
		case []any:
			for _, v := range n {
				mark(v, "", under)
			}
		}
	}
	for name, def := range defs {
		mark(def, name, false)
	}
}

func refsIn(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, it := range list {
		if m, ok := it.(map[string]any); ok {
			if r, ok := m["$ref"].(string); ok {
				out = append(out, strings.TrimPrefix(r, "#/$defs/"))
			}
		}
	}
	return out
}

// itemFor names the checklist item a schema failure of method breaks.
func itemFor(method string, subagent bool) string {
	switch {
	case subagent:
		return "subagents#8"
	case method == "initialize":
		return "acp-v1#16"
	case method == "session/update":
		return "acp-v1#40"
	case method == "session/request_permission":
		return "acp-v1#55"
	case strings.HasPrefix(method, "fs/"):
		return "acp-v1#66"
	case strings.HasPrefix(method, "terminal/"):
		return "acp-v1#68"
	case method == "session/set_config_option":
		return "acp-v1#62"
	case method == "session/list":
		return "acp-v1#33"
	}
	return "acp-v1#6"
}

// CheckLine validates one agent line and returns what it breaks. Lines
// the schema does not describe (extension methods, answers to invalid
// requests) are not checked; checked reports whether the line was.
func (s *SchemaSet) CheckLine(l *Line) (out []Violation, checked bool) {
	if l.Dir != FromAgent || l.Msg == nil || l.Err != nil {
		return nil, false
	}
	m := l.Msg
	var kind, method string
	var payload json.RawMessage
	switch {
	case m.IsRequest():
		kind, method, payload = "request", m.Method, m.Params
	case m.IsNotification():
		kind, method, payload = "notification", m.Method, m.Params
	case m.Error != nil:
		kind, method = "error", l.ReplyTo
	default:
		kind, method, payload = "response", l.ReplyTo, m.Result
	}
	flag := func(item, format string, args ...any) {
		out = append(out, Violation{Item: item, Text: fmt.Sprintf(format, args...), Seq: l.Seq})
	}
	if kind == "error" {
		var e json.RawMessage
		env := map[string]json.RawMessage{}
		if json.Unmarshal(l.Raw, &env) == nil {
			e = env["error"]
		}
		return s.validate(s.stable, "Error", e, "acp-v1#6", l.Seq), true
	}
	subagent := false
	if method == "session/update" {
		subagent = slices.Contains(subagentUpdates, m.UpdateKind())
		var sessionItems []json.RawMessage
		payload, sessionItems = stripSessionItems(payload)
		for _, it := range sessionItems {
			subagent = true
			keys := getObject(it)
			for k := range keys {
				if k != "type" && k != "sessionId" && k != "_meta" {
					flag("acp-v1#76", "session content item with the unknown key %q", k)
				}
			}
			if getString(it, "sessionId") == "" {
				flag("subagents#14", "session content item without a sessionId")
			}
		}
	}
	doc := s.stable
	if subagent {
		doc = s.unstable
	}
	def := doc.byMethod[method+"/"+kind]
	if def == "" && doc == s.stable {
		// A method only the draft schema has (session/fork): checked
		// against it.
		doc, subagent = s.unstable, false
		def = doc.byMethod[method+"/"+kind]
	}
	if def == "" {
		return nil, false
	}
	if payload == nil {
		payload = json.RawMessage("null")
	}
	out = append(out, s.validate(doc, def, payload, itemFor(method, subagent), l.Seq)...)
	return out, true
}

// validate checks payload against def of doc, loosely and then strictly
// (no key the schema does not name). A message of the stable schema that
// only the draft schema (schema.unstable.json) accepts is advice, not a
// failure: the agent uses a draft feature. Unknown keys are named one by
// one with the definition that lacks them.
func (s *SchemaSet) validate(doc *schemaDoc, def string, payload json.RawMessage, item string, seq int) []Violation {
	var v any
	if err := json.Unmarshal(payload, &v); err != nil {
		return []Violation{{Item: item, Text: "not JSON: " + err.Error(), Seq: seq}}
	}
	r, err := doc.validator(def, false)
	if err != nil {
		return []Violation{{Item: item, Text: "schema: " + err.Error(), Seq: seq}}
	}
	var out []Violation
	if err := r.Validate(v); err != nil {
		draft := s.draftFor(doc, def)
		if draft == nil || !draft.validates("#/$defs/"+def, v) {
			return []Violation{{Item: item, Text: fmt.Sprintf("%s does not validate against %s (%s): %s", def, doc.name, def, schemaRule(err)), Seq: seq}}
		}
		out = append(out, Violation{Item: item, Advice: true, Seq: seq, Text: fmt.Sprintf("%s validates only against %s, a draft feature: under %s it breaks %s", def, draft.name, doc.name, schemaRule(err))})
		doc = draft
	}
	strict, err := doc.validator(def, true)
	if err != nil {
		return append(out, Violation{Item: "acp-v1#76", Text: "schema: " + err.Error(), Seq: seq})
	}
	serr := strict.Validate(v)
	if serr == nil {
		return out
	}
	keys := doc.unknownKeys(def, v)
	if len(keys) == 0 {
		return append(out, Violation{Item: "acp-v1#76", Seq: seq, Text: fmt.Sprintf("%s has a key %s does not define: %s", def, doc.name, schemaRule(serr))})
	}
	var draftUnknown map[string]bool
	if draft := s.draftFor(doc, def); draft != nil {
		draftUnknown = map[string]bool{}
		for _, k := range draft.unknownKeys(def, v) {
			draftUnknown[k.path] = true
		}
	}
	for _, k := range keys {
		switch {
		case draftUnknown != nil && !draftUnknown[k.path] && sanctioned[k.def+"."+lastKey(k.path)]:
			// An unstable feature acp-v1 §25 asks for: it must be what
			// the draft says.
			if draft := s.draftFor(doc, def); !draft.validates("#/$defs/"+def, v) {
				out = append(out, Violation{Item: item, Seq: seq, Text: fmt.Sprintf("%s: %s does not validate against %s", def, k.path, draft.name)})
			}
		case draftUnknown != nil && !draftUnknown[k.path]:
			out = append(out, Violation{Item: "acp-v1#76", Advice: true, Seq: seq, Text: fmt.Sprintf("%s: %s is defined only in %s, a draft feature (%s in %s has no property %q)", def, k.path, s.unstable.name, k.def, doc.name, lastKey(k.path))})
		default:
			where := doc.name
			if draftUnknown != nil {
				where += " or " + s.unstable.name
			}
			out = append(out, Violation{Item: "acp-v1#76", Seq: seq, Text: fmt.Sprintf("%s: %s is not defined by %s in %s (strict check: no key the schema does not name; custom data belongs under _meta)", def, k.path, k.def, where)})
		}
	}
	return out
}

// sanctioned are the keys of unstable features that acp-v1 §25 (update of
// 2026-12-01) asks an agent to implement exactly as schema.unstable.json
// shapes them; the stable schema admits them as extra keys. They are
// checked against the draft and reported neither as advice nor as a
// failure.
var sanctioned = map[string]bool{
	"PromptResponse.usage":     true, // rfd:end-turn-token-usage
	"SessionCapabilities.fork": true, // rfd:session-fork
}

// draftFor returns the draft schema when doc is the stable one and the
// draft has def too.
func (s *SchemaSet) draftFor(doc *schemaDoc, def string) *schemaDoc {
	if doc != s.stable || s.unstable == nil {
		return nil
	}
	if defs, _ := s.unstable.raw["$defs"].(map[string]any); defs[def] == nil {
		return nil
	}
	return s.unstable
}

func lastKey(path string) string {
	if i := strings.LastIndex(path, "."); i >= 0 {
		return path[i+1:]
	}
	return path
}

// stripSessionItems removes `session` tool-call content items, which no
// published schema describes yet (acp-subagents §12), and returns them.
func stripSessionItems(params json.RawMessage) (json.RawMessage, []json.RawMessage) {
	content := getArray(params, "update", "content")
	var items, kept []json.RawMessage
	for _, it := range content {
		if getString(it, "type") == "session" {
			items = append(items, it)
			continue
		}
		kept = append(kept, it)
	}
	if len(items) == 0 {
		return params, nil
	}
	var p map[string]any
	if json.Unmarshal(params, &p) != nil {
		return params, items
	}
	u, _ := p["update"].(map[string]any)
	var ks []any
	for _, k := range kept {
		var x any
		_ = json.Unmarshal(k, &x)
		ks = append(ks, x)
	}
	if ks == nil {
		ks = []any{}
	}
	u["content"] = ks
	b, err := json.Marshal(p)
	if err != nil {
		return params, items
	}
	return b, items
}

// Check validates every agent line of a transcript; it returns the
// violations and how many lines were checked.
func (s *SchemaSet) Check(lines []*Line) ([]Violation, int) {
	var out []Violation
	n := 0
	for _, l := range lines {
		v, ok := s.CheckLine(l)
		if ok {
			n++
		}
		out = append(out, v...)
	}
	return out, n
}

// FindSchemaDir looks for the npm package's schema/v1 directory under
// conformance/interop/node_modules, starting at dir and walking up.
func FindSchemaDir(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		p := filepath.Join(d, "conformance", "interop", "node_modules", "@agentclientprotocol", "sdk", "schema", "v1")
		if _, err := os.Stat(filepath.Join(p, "schema.json")); err == nil {
			return p, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("conformance: @agentclientprotocol/sdk is not installed in conformance/interop/node_modules (run npm ci there)")
		}
	}
}
