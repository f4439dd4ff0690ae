// This file runs the data cases: files of `>>` lines the client writes and
// `<<` patterns the agent's lines must match (acp-v1.md notation), under
// testdata/cases, each with a header naming what it guards.
//
// A file looks like this:
//
//	# guards: unknown request methods get -32601 with the request's own id
//	# items: acp-v1#9 acp-v1#5
//	# needs: sessionCapabilities.list        (optional)
//	>> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}
//	<< {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}
//	>> {"jsonrpc":"2.0","id":"q1","method":"_acme/ping","params":{}}
//	<< {"jsonrpc":"2.0","id":"q1","error":{"code":-32601}}
//
// `>>` lines are written byte for byte after two substitutions: {{cwd}} is
// the case's empty working directory, and "$name" (a whole JSON string) is
// the JSON value a pattern captured under that name. `<<` lines are
// patterns: objects match when every key they name matches (the agent may
// send more keys), arrays match element by element, "$any" matches any
// value, "$absent" requires the key to be missing, and "$name" captures a
// value the first time and must equal it afterwards. Responses are matched
// strictly in order: the agent's next response must match the next
// response pattern. Other messages may come in between and are skipped
// while a pattern waits for its match. Directives: `== restart` starts a
// fresh agent process; `== barrier` checks that the agent answers nothing
// in between (notifications get no answer). Every file ends with an
// implicit barrier.

package conformance

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

type scriptStep struct {
	line    int
	kind    string // ">>", "<<", "=="
	text    string
	pattern any
}

type dataCase struct {
	file  string
	steps []scriptStep
}

// dataCases loads the cases under testdata/cases.
func dataCases() []*Case {
	var out []*Case
	files, _ := fs.Glob(testdata, "testdata/cases/*.acp")
	for _, f := range files {
		b, err := testdata.ReadFile(f)
		c, err2 := ParseDataCase(path.Base(f), b)
		if err == nil {
			err = err2
		}
		if err != nil {
			msg := err.Error()
			out = append(out, &Case{ID: "data/" + strings.TrimSuffix(path.Base(f), ".acp"), Name: "a data case that does not parse", Run: func(t *T) { t.Fatalf("%s", msg) }})
			continue
		}
		out = append(out, c)
	}
	return out
}

var (
	varName   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\$[A-Za-z_][A-Za-z0-9_]*$`) })
	quotedVar = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"\$[A-Za-z_][A-Za-z0-9_]*"`) })
)

// ParseDataCase parses one data case file.
func ParseDataCase(name string, src []byte) (*Case, error) {
	dc := &dataCase{file: name}
	c := &Case{ID: "data/" + strings.TrimSuffix(name, ".acp")}
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.TrimSpace(line) == "":
		case strings.HasPrefix(line, "#"):
			key, val, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(line, "#")), ":")
			if !ok {
				continue
			}
			val = strings.TrimSpace(val)
			switch strings.TrimSpace(key) {
			case "guards":
				if c.Name == "" {
					c.Name = val
				}
			case "name":
				c.Name = val
			case "items":
				c.Items = append(c.Items, strings.Fields(val)...)
			case "needs":
				c.Needs = append(c.Needs, strings.Fields(val)...)
			}
		case strings.HasPrefix(line, ">> "):
			dc.steps = append(dc.steps, scriptStep{line: n, kind: ">>", text: line[3:]})
		case strings.HasPrefix(line, "<< "):
			dec := json.NewDecoder(strings.NewReader(line[3:]))
			dec.UseNumber()
			var p any
			if err := dec.Decode(&p); err != nil {
				return nil, fmt.Errorf("%s:%d: bad pattern: %v", name, n, err)
			}
			dc.steps = append(dc.steps, scriptStep{line: n, kind: "<<", text: line[3:], pattern: p})
		case strings.HasPrefix(line, "== "):
			d := strings.TrimSpace(line[3:])
			if d != "restart" && d != "barrier" {
				return nil, fmt.Errorf("%s:%d: unknown directive %q", name, n, d)
			}
			dc.steps = append(dc.steps, scriptStep{line: n, kind: "==", text: d})
		default:
			return nil, fmt.Errorf("%s:%d: a line must start with >>, <<, ==, or #", name, n)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if c.Name == "" || len(c.Items) == 0 {
		return nil, fmt.Errorf("%s: the header needs a guards (or name) line and an items line", name)
	}
	c.Run = dc.run
	return c, nil
}

// scriptState is one run of a data case.
type scriptState struct {
	t        *T
	c        *Client
	vars     map[string]any
	respNext int // seq from which the next response is taken
	msgNext  int // seq from which other messages are searched
	file     string
}

func (dc *dataCase) run(t *T) {
	st := &scriptState{t: t, vars: map[string]any{}, file: dc.file}
	st.start()
	for _, s := range dc.steps {
		switch s.kind {
		case ">>":
			line := strings.ReplaceAll(s.text, "{{cwd}}", strings.Trim(string(mustJSON(t.Cwd)), `"`))
			line = st.substitute(line)
			if err := st.c.WriteRaw([]byte(line)); err != nil {
				t.Fatalf("%s:%d: %v", dc.file, s.line, err)
			}
		case "<<":
			st.expect(s)
		case "==":
			if s.text == "restart" {
				st.c.Shutdown(5 * time.Second)
				st.start()
			} else {
				st.barrier(s.line)
			}
		}
	}
	st.barrier(0)
}

func (st *scriptState) start() {
	st.c = st.t.Start(nil)
	st.respNext, st.msgNext = 0, 0
}

// substitute replaces "$name" strings with captured values.
func (st *scriptState) substitute(line string) string {
	return quotedVar().ReplaceAllStringFunc(line, func(s string) string {
		if v, ok := st.vars[strings.Trim(s, `"`)]; ok {
			return string(mustJSON(v))
		}
		return s
	})
}

func isResponsePattern(p any) bool {
	m, ok := p.(map[string]any)
	if !ok {
		return false
	}
	_, hasID := m["id"]
	_, hasMethod := m["method"]
	return hasID && !hasMethod
}

func (st *scriptState) expect(s scriptStep) {
	t := st.t
	where := fmt.Sprintf("%s:%d", st.file, s.line)
	if isResponsePattern(s.pattern) {
		// A line that answers but breaks the envelope (an error without an
		// id) is the next response too: it fails the pattern at once
		// instead of leaving the case to wait for one that never comes.
		l, err := st.c.AwaitMsg(t.ctx, st.respNext, "a response matching "+where+": "+s.text, func(m *Msg) bool { return m.Method == "" })
		if err != nil {
			t.Fatalf("%v", err)
		}
		st.respNext = l.Seq + 1
		if why := st.match(s.pattern, l.Raw); why != "" {
			t.Fatalf("%s: the agent's next response does not match: %s\n  want %s\n  got  %s", where, why, s.text, clip(l.Raw, 400))
		}
		return
	}
	var why string
	l, err := st.c.Await(t.ctx, st.msgNext, "a message matching "+where+": "+s.text, func(l *Line) bool {
		if l.Msg == nil || l.Msg.IsResponse() {
			return false
		}
		saved := maps.Clone(st.vars)
		if why = st.match(s.pattern, l.Raw); why != "" {
			st.vars = saved
			return false
		}
		return true
	})
	if err != nil {
		t.Fatalf("%v", err)
	}
	st.msgNext = l.Seq + 1
}

// barrier checks that no response arrives before the barrier's own.
func (st *scriptState) barrier(line int) {
	t := st.t
	seq := t.Barrier(st.c)
	for _, l := range st.c.Messages(st.respNext, func(m *Msg) bool { return m.Method == "" }) {
		if l.Seq < seq {
			t.Fatalf("%s:%d: an unexpected response before the barrier: %s", st.file, line, clip(l.Raw, 300))
		}
	}
	st.respNext = seq + 1
}

// match matches a pattern against raw JSON; it returns why not, or "".
func (st *scriptState) match(pattern any, raw []byte) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "not JSON"
	}
	return matchValue(pattern, v, "", st.vars)
}

// matchValue matches got against want (see the file comment).
func matchValue(want, got any, at string, vars map[string]any) string {
	if s, ok := want.(string); ok && strings.HasPrefix(s, "$") {
		switch {
		case s == "$any":
			return ""
		case varName().MatchString(s):
			if prev, ok := vars[s]; ok {
				return matchValue(prev, got, at, map[string]any{})
			}
			vars[s] = got
			return ""
		}
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: want an object, got %s", orRoot(at), short(got))
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			gv, present := g[k]
			if w[k] == "$absent" {
				if present {
					return fmt.Sprintf("%s.%s: want no such key, got %s", at, k, short(gv))
				}
				continue
			}
			if !present {
				return fmt.Sprintf("%s.%s: missing", at, k)
			}
			if why := matchValue(w[k], gv, at+"."+k, vars); why != "" {
				return why
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: want an array of %d, got %s", orRoot(at), len(w), short(got))
		}
		for i := range w {
			if why := matchValue(w[i], g[i], fmt.Sprintf("%s[%d]", at, i), vars); why != "" {
				return why
			}
		}
		return ""
	}
	if !sameScalar(want, got) {
		return fmt.Sprintf("%s: want %s, got %s", orRoot(at), short(want), short(got))
	}
	return ""
}

func sameScalar(a, b any) bool {
	an, aok := a.(json.Number)
	bn, bok := b.(json.Number)
	if aok || bok {
		return aok && bok && an.String() == bn.String()
	}
	return a == b
}

func orRoot(at string) string {
	if at == "" {
		return "the message"
	}
	return at
}

func short(v any) string {
	b, _ := json.Marshal(v)
	return clip(b, 120)
}
