// Tests of session/new's _meta keys in dshd's namespace (dshd.dev/...):
// a typo or a value of the wrong kind is refused, naming the key, never
// read as something else.

package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

func TestDshdMetaKeysWithAWrongValueOrNameAreRefusedAndOthersIgnored(t *testing.T) {
	ctx := testkit.Context(t)
	state, cwd := t.TempDir(), t.TempDir()
	p := start(t, opts{}, "--model", "scripted", "--state-dir", state)
	c := stdioWire(p)
	c.initialize(ctx, nil)
	withMeta := func(meta map[string]any) map[string]any {
		params := newParams(cwd)
		params["_meta"] = meta
		return params
	}
	journals := func() int {
		t.Helper()
		js, err := filepath.Glob(filepath.Join(state, "sessions", "*.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		return len(js)
	}
	refused := func(method string, params map[string]any, field string, words ...string) {
		t.Helper()
		e := c.callFail(ctx, method, params)
		var data struct {
			Field  string `json:"field"`
			Reason string `json:"reason"`
		}
		if err := json.Unmarshal(e.Data, &data); err != nil {
			t.Fatalf("%s: the error's data %s: %v", method, e.Data, err)
		}
		if e.Code != -32602 || data.Field != field || !containsAll(data.Reason, words...) {
			t.Fatalf("%s with _meta %v answered %v, want -32602 on %s saying %q", method, params["_meta"], e, field, words)
		}
	}

	for _, tc := range []struct {
		meta  map[string]any
		field string
		words []string
	}{
		// The audit's case: the string was read as a spent budget.
		{map[string]any{"dshd.dev/maxTokens": "50000"}, "_meta.dshd.dev/maxTokens", []string{"a whole number from 1 up", `not the string "50000"`}},
		// And this one as no limit at all.
		{map[string]any{"dshd.dev/maxDepth": "0"}, "_meta.dshd.dev/maxDepth", []string{"a whole number from 0 up", `not the string "0"`}},
		{map[string]any{"dshd.dev/maxTurns": 0}, "_meta.dshd.dev/maxTurns", []string{"a whole number from 1 up", "not the number 0"}},
		{map[string]any{"dshd.dev/maxTurns": 2.5}, "_meta.dshd.dev/maxTurns", []string{"not the number 2.5"}},
		{map[string]any{"dshd.dev/depth": -1}, "_meta.dshd.dev/depth", []string{"a whole number from 0 up", "not the number -1"}},
		{map[string]any{"dshd.dev/maxDepth": nil}, "_meta.dshd.dev/maxDepth", []string{"not null"}},
		{map[string]any{"dshd.dev/checkout": "https://example.com/r.git"}, "_meta.dshd.dev/checkout", []string{`an object {"repo": URL`, "not the string"}},
		{map[string]any{"dshd.dev/checkout": map[string]any{"repo": "https://example.com/r.git", "revision": "main"}}, "_meta.dshd.dev/checkout", []string{`with no other key (it has "revision")`}},
		{map[string]any{"dshd.dev/maxDepht": 0}, "_meta.dshd.dev/maxDepht", []string{"is not a key session/new takes", "dshd.dev/maxTokens", `did you mean "dshd.dev/maxDepth"?`}},
		{map[string]any{"dshd.dev/nosuch": true, "dshd.dev/maxTokens": 100}, "_meta.dshd.dev/nosuch", []string{"is not a key session/new takes"}},
	} {
		refused("session/new", withMeta(tc.meta), tc.field, tc.words...)
	}
	if n := journals(); n != 0 {
		t.Fatalf("refused requests left %d sessions", n)
	}

	// Right values, and keys of other namespaces, are taken.
	var res newResult
	c.call(ctx, "session/new", withMeta(map[string]any{
		"dshd.dev/depth": 0, "dshd.dev/maxDepth": 0, "dshd.dev/maxTokens": 50000, "dshd.dev/maxTurns": 7,
		"zed.dev/anything": "x", "other": []any{1},
	}), &res)
	if res.SessionID == "" || journals() != 1 {
		t.Fatalf("session/new with good _meta answered %+v, %d sessions", res, journals())
	}

	// A reopened or forked session keeps what it was created with: those
	// methods take no dshd.dev/ key.
	for _, method := range []string{"session/load", "session/resume", "session/fork"} {
		params := withMeta(map[string]any{"dshd.dev/maxTokens": 10, "zed.dev/anything": "x"})
		params["sessionId"] = res.SessionID
		refused(method, params, "_meta.dshd.dev/maxTokens", "is not a key "+method+" takes", "takes no dshd.dev/ keys")
	}
	if n := journals(); n != 1 {
		t.Fatalf("refused requests left %d sessions, want the one made", n)
	}
}
