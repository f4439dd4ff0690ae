package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

type typedParams struct {
	Path  string `json:"path" jsonschema:"The file"`
	Lines int    `json:"lines,omitempty"`
}

// newTypedTool returns a Typed tool, titled by title (nil: none), that
// answers the params it was run with, and records them in ran.
func newTypedTool(ran *[]typedParams, title func(json.RawMessage) string) Typed[typedParams] {
	return NewTyped(Static{ToolName: "typed", ToolKind: KindRead, ToolTitle: title}, func(_ context.Context, _ *Call, p typedParams) (*Result, error) {
		*ran = append(*ran, p)
		return &Result{Output: p.Path}, nil
	})
}

func TestTyped(t *testing.T) {
	t.Run("the tool runs with the decoded arguments", func(t *testing.T) {
		var ran []typedParams
		tool := newTypedTool(&ran, nil)
		res, err := tool.Execute(t.Context(), &Call{Input: json.RawMessage(`{"path":"a.go","lines":3}`)})
		if err != nil || res.IsError || res.Output != "a.go" || len(ran) != 1 || ran[0] != (typedParams{"a.go", 3}) {
			t.Fatalf("Execute = %+v, %v; ran with %+v", res, err, ran)
		}
	})
	t.Run("arguments that do not decode are the model's error, and the tool does not run", func(t *testing.T) {
		for _, in := range []string{`{"path":"a.go","line":3}`, `{"path":7}`, `[1]`} {
			var ran []typedParams
			tool := newTypedTool(&ran, nil)
			res, err := tool.Execute(t.Context(), &Call{Input: json.RawMessage(in)})
			if err != nil || !res.IsError || !strings.HasPrefix(res.Output, "invalid arguments: ") || len(ran) != 0 {
				t.Errorf("%s: Execute = %+v, %v; ran with %+v", in, res, err, ran)
			}
		}
	})
	t.Run("the title comes from the decoded arguments, from none when they do not decode", func(t *testing.T) {
		tool := newTypedTool(new([]typedParams), TitleOf(func(p typedParams) string {
			if p.Path == "" {
				return "Look"
			}
			return "Look at " + p.Path
		}))
		for in, want := range map[string]string{
			`{"path":"a.go"}`:             "Look at a.go",
			`{}`:                          "Look",
			`{"path":"a.go","line":3}`:    "Look", // not the path decoded before the unknown field
			`{"lines":"x","path":"a.go"}`: "Look",
		} {
			if got := tool.Title(json.RawMessage(in)); got != want {
				t.Errorf("Title(%s) = %q, want %q", in, got, want)
			}
		}
	})
	t.Run("a tool without a title of its own has the empty one", func(t *testing.T) {
		tool := newTypedTool(new([]typedParams), nil)
		if got := tool.Title(json.RawMessage(`{"path":"a.go"}`)); got != "" {
			t.Errorf("Title = %q", got)
		}
	})
	t.Run("a tool made from another's static half (a bound copy) titles its calls the same", func(t *testing.T) {
		tool := newTypedTool(new([]typedParams), func(in json.RawMessage) string { return "raw " + string(in) })
		bound := NewTyped(tool.Static, func(context.Context, *Call, typedParams) (*Result, error) { return nil, nil })
		if got := bound.Title(json.RawMessage(`{"x":1}`)); got != `raw {"x":1}` {
			t.Errorf("Title = %q", got)
		}
	})
	t.Run("the schema is the params struct's unless the static half has one", func(t *testing.T) {
		tool := newTypedTool(new([]typedParams), nil)
		if got, want := string(tool.InputSchema()), string(SchemaFor[typedParams](nil)); got != want {
			t.Errorf("InputSchema = %s, want %s", got, want)
		}
		own := NewTyped(Static{Schema: func() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }},
			func(context.Context, *Call, typedParams) (*Result, error) { return nil, nil })
		if got := string(own.InputSchema()); got != `{"type":"object"}` {
			t.Errorf("InputSchema = %s", got)
		}
	})
}
