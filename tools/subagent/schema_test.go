package subagent_test

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"weak"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/internal/outputschema"
	"github.com/dshd/dshd/subagents/spawn"
	st "github.com/dshd/dshd/subagents/subagenttest"
	"github.com/dshd/dshd/tools/subagent"
)

// TestExecute_ABindingCompilesItsOutputSchemaOnce: from its first call
// a binding holds its schema compiled, so its children's starts do not
// compile it again.
func TestExecute_ABindingCompilesItsOutputSchemaOnce(t *testing.T) {
	raw := json.RawMessage(`{"type":"object","required":["held_by_the_binding"]}`)
	p := world(t, st.ParentOptions{Model: st.Model(func(context.Context, *llm.Request) st.Reply {
		return st.Reply{Text: `{"held_by_the_binding": true}`}
	})}, subagent.Binding{ToolName: "reviewer", Description: "Reviews.", Provider: spawn.Name, OutputSchema: raw})
	if res := call(t, t.Context(), p, "reviewer", "review", "review it", nil); res.IsError {
		t.Fatalf("the first call: %+v", res)
	}
	first := compiledWeak(t, raw)
	runtime.GC()
	runtime.GC()
	now, err := outputschema.Compile(raw)
	if err != nil {
		t.Fatal(err)
	}
	if first.Value() != now {
		t.Fatal("the binding's schema was not held after its first call: the next start compiles it again")
	}
}

func compiledWeak(t *testing.T, raw json.RawMessage) weak.Pointer[jsonschema.Resolved] {
	r, err := outputschema.Compile(raw)
	if err != nil {
		t.Fatal(err)
	}
	return weak.Make(r)
}

// TestExecute_TheSharedSchemaValidatesEveryCall: calls of one binding
// share its compiled schema, which takes a valid answer and refuses an
// invalid one on each call as it did on the first.
func TestExecute_TheSharedSchemaValidatesEveryCall(t *testing.T) {
	answer := make(chan string, 2)
	p := world(t, st.ParentOptions{Model: st.Model(func(context.Context, *llm.Request) st.Reply {
		return st.Reply{Text: <-answer}
	})}, subagent.Binding{ToolName: "counter", Description: "Counts.", Provider: spawn.Name,
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"]}`)})
	for i := range 2 {
		answer <- `{"count": 3}`
		res := call(t, t.Context(), p, "counter", "count", "count them", nil)
		if res.IsError || res.Output != `{"count": 3}` {
			t.Fatalf("call %d, a valid answer: %+v", i, res)
		}
		// Invalid, then invalid again after the correction.
		answer <- `{"count": "three"}`
		answer <- `{"count": "three"}`
		res = call(t, t.Context(), p, "counter", "count", "count them", nil)
		if !res.IsError || !strings.Contains(res.Output, "does not match the output schema") {
			t.Fatalf("call %d, an invalid answer: %+v", i, res)
		}
	}
}
