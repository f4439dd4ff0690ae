package openai_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/llm/openai"
	"github.com/dshd/dshd/agent/llm/openai/openaitest"
)

// BenchmarkTurnOnFakeServer measures a whole prompt turn end to end: the
// agent loop sends the request over loopback HTTP to the fake server,
// which streams a DeepSeek-shaped answer (40 reasoning and 300 text
// fragments, usage), and the turn ends with end_turn. It is the figure a
// change to the chunk decoder has to move to matter.
func BenchmarkTurnOnFakeServer(b *testing.B) {
	fake := openaitest.New()
	defer fake.Close()
	reply := openaitest.Reply{}
	for i := range 40 {
		reply.Reasoning = append(reply.Reasoning, fmt.Sprintf("step %d of the plan ", i))
	}
	words := strings.Fields("Here is the change you asked for: the handler now checks the error and returns it")
	for i := range 300 {
		reply.Text = append(reply.Text, " "+words[i%len(words)])
	}
	fake.Handle(func(*openaitest.Request) openaitest.Reply { return reply })
	o := openai.DeepSeek()
	o.BaseURL = fake.URL()
	client, err := openai.New(o)
	if err != nil {
		b.Fatal(err)
	}
	defer client.CloseIdleConnections()
	ctx := context.Background()
	events := 0
	b.ReportAllocs()
	for b.Loop() {
		a := agent.New(agent.Options{ID: "bench", Model: client, ModelID: "deepseek-flash"})
		res, err := a.Prompt(ctx, agent.Input{Text: "change the handler"}, func(agent.Event) { events++ })
		if err != nil || res.StopReason != agent.StopEndTurn {
			b.Fatalf("turn: %v %v", res.StopReason, err)
		}
		a.Close()
	}
	b.ReportMetric(float64(events)/float64(b.N), "events/turn")
}
