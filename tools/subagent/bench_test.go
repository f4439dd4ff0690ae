package subagent_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/subagents/spawn"
	st "github.com/dshd/dshd/subagents/subagenttest"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/subagent"
)

// benchSchema is the output schema of a reviewer agent, of the size the
// definitions' benchmarks use.
const benchSchema = `{"type":"object","required":["summary"],"properties":{"summary":{"type":"string"},"findings":{"type":"array","items":{"type":"string"}}}}`

// BenchmarkStart_OutputSchema is a call of a bound spawn binding, with
// and without an output schema, up to its child's first model call
// (ns/first-call): the difference is what the schema costs each start.
// The child's answer, its validation and the disposal are off that clock.
func BenchmarkStart_OutputSchema(b *testing.B) {
	for _, bc := range []struct {
		name   string
		schema string
		answer string
	}{
		{"without schema", "", "ok"},
		{"with schema", benchSchema, `{"summary":"ok","findings":[]}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			called := make(chan time.Time, 1)
			p := st.NewParent(b, st.ParentOptions{Model: st.Model(func(context.Context, *llm.Request) st.Reply {
				called <- time.Now()
				return st.Reply{Text: bc.answer}
			})})
			p.Service.RegisterProvider(spawn.New(nil))
			bnd := subagent.Binding{ToolName: "reviewer", Description: "Reviews the change.", Provider: spawn.Name}
			if bc.schema != "" {
				bnd.OutputSchema = json.RawMessage(bc.schema)
			}
			dispose, err := subagent.Bind(p.Service, p.Tools, bnd, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer dispose()
			tl, ok := p.Tool("reviewer")
			if !ok {
				b.Fatal("no reviewer tool")
			}
			in, _ := json.Marshal(map[string]string{"description": "Review", "prompt": "Review the change."})
			ctx := context.Background()
			var total time.Duration
			b.ReportAllocs()
			for b.Loop() {
				t0 := time.Now()
				res, err := tl.Execute(ctx, &tools.Call{ID: "tc_1", Input: in, Env: p.Env, Report: tools.Discard})
				if err != nil || res.IsError {
					b.Fatalf("%v %+v", err, res)
				}
				total += (<-called).Sub(t0)
			}
			b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "ns/first-call")
		})
	}
}
