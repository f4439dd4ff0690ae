package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/tools"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// replyFunc decides a model reply from the request.
type replyFunc func(ctx context.Context, req *llm.Request) ([]llm.Event, error)

// funcModel is a deterministic in-process model: it streams the events its
// function returns, honouring ctx between events.
type funcModel struct {
	calls atomic.Int64
	reply replyFunc
	mu    sync.Mutex
	reqs  []*llm.Request
}

func (m *funcModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		m.calls.Add(1)
		m.mu.Lock()
		m.reqs = append(m.reqs, req)
		m.mu.Unlock()
		evs, err := m.reply(ctx, req)
		for _, ev := range evs {
			if ctx.Err() != nil {
				yield(llm.Event{}, ctx.Err())
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
		if err != nil {
			yield(llm.Event{}, err)
		}
	}
}

func text(s ...string) []llm.Event {
	var evs []llm.Event
	for _, p := range s {
		evs = append(evs, llm.Event{Kind: llm.EventText, Text: p})
	}
	return append(evs, llm.Event{Kind: llm.EventUsage, Usage: &llm.Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15}}, llm.Event{Kind: llm.EventFinish, Finish: llm.FinishStop})
}

func toolCalls(calls ...llm.ToolCall) []llm.Event {
	var evs []llm.Event
	for i := range calls {
		evs = append(evs, llm.Event{Kind: llm.EventToolCall, ToolCall: &calls[i]})
	}
	return append(evs, llm.Event{Kind: llm.EventFinish, Finish: llm.FinishToolCalls})
}

// step counts assistant messages after the last user message.
func step(req *llm.Request) int {
	n := 0
	for i := len(req.Messages) - 1; i >= 0; i-- {
		switch req.Messages[i].Role {
		case llm.RoleUser:
			return n
		case llm.RoleAssistant:
			n++
		}
	}
	return n
}

func lastTool(req *llm.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == llm.RoleTool {
			return req.Messages[i].Content
		}
	}
	return ""
}

// echoTool returns its "text" argument; it can be made to block or panic.
type echoTool struct {
	name    string
	block   chan struct{}
	panics  bool
	running atomic.Int64
	peak    atomic.Int64
}

func (e *echoTool) Name() string                 { return e.name }
func (e *echoTool) Description() string          { return "echo" }
func (e *echoTool) InputSchema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (e *echoTool) Kind() tools.Kind             { return tools.KindRead }
func (e *echoTool) Execute(ctx context.Context, call *tools.Call) (*tools.Result, error) {
	n := e.running.Add(1)
	defer e.running.Add(-1)
	for {
		p := e.peak.Load()
		if n <= p || e.peak.CompareAndSwap(p, n) {
			break
		}
	}
	if e.panics {
		panic("boom")
	}
	if e.block != nil {
		select {
		case <-e.block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	var in struct{ Text string }
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return tools.Errorf("bad input: %v", err), nil
	}
	return &tools.Result{Output: "echo:" + in.Text}, nil
}

type toolSet map[string]tools.Tool

func (s toolSet) Tools() []tools.Tool {
	var out []tools.Tool
	for _, t := range s {
		out = append(out, t)
	}
	return out
}
func (s toolSet) Get(name string) (tools.Tool, bool) { t, ok := s[name]; return t, ok }

type recorder struct {
	mu  sync.Mutex
	evs []agent.Event
}

func (r *recorder) emit(e agent.Event) { r.mu.Lock(); r.evs = append(r.evs, e); r.mu.Unlock() }
func (r *recorder) events() []agent.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]agent.Event(nil), r.evs...)
}

// nextTurnEnds checks that a's next turn, on text, ends normally: the
// agent is usable again after a cancel or a failure.
func nextTurnEnds(t *testing.T, a *agent.Agent, text string) {
	t.Helper()
	res, err := a.Prompt(t.Context(), agent.Input{Text: text}, func(agent.Event) {})
	if err != nil || res.StopReason != agent.StopEndTurn {
		t.Fatalf("next turn on %q: %+v %v", text, res, err)
	}
}

// count is how many of the recorded events match.
func (r *recorder) count(match func(agent.Event) bool) int {
	n := 0
	for _, e := range r.events() {
		if match(e) {
			n++
		}
	}
	return n
}

func newAgent(t *testing.T, m llm.Model, ts agent.ToolSet) *agent.Agent {
	t.Helper()
	a := agent.New(agent.Options{ID: t.Name(), Model: m, ModelID: "test", Tools: ts})
	t.Cleanup(a.Close)
	return a
}

func TestPrompt_StreamsTextAndEndsTurn(t *testing.T) {
	m := &funcModel{reply: func(ctx context.Context, req *llm.Request) ([]llm.Event, error) {
		return text("Hel", "lo"), nil
	}}
	a := newAgent(t, m, nil)
	var rec recorder
	res, err := a.Prompt(t.Context(), agent.Input{Text: "hi"}, rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != agent.StopEndTurn {
		t.Fatalf("stop reason %q", res.StopReason)
	}
	var got strings.Builder
	ids := map[string]bool{}
	for _, e := range rec.events() {
		if c, ok := e.(agent.MessageChunk); ok {
			got.WriteString(c.Text)
			ids[c.MessageID] = true
		}
	}
	if got.String() != "Hello" || len(ids) != 1 {
		t.Fatalf("chunks %q with %d message ids", got.String(), len(ids))
	}
	if res.LastMessage == nil || res.LastMessage.Content != "Hello" || res.Streamed != "Hello" {
		t.Fatalf("result %+v", res)
	}
	if res.Usage.TotalTokens != 15 {
		t.Fatalf("usage %+v", res.Usage)
	}
}

func TestPrompt_ReasoningIsStoredVerbatimIncludingEmpty(t *testing.T) {
	m := &funcModel{reply: func(ctx context.Context, req *llm.Request) ([]llm.Event, error) {
		if step(req) == 0 {
			return append([]llm.Event{{Kind: llm.EventReasoning, Text: ""}}, toolCalls(llm.ToolCall{ID: "c1", Name: "echo", Arguments: `{"text":"x"}`})...), nil
		}
		return append([]llm.Event{{Kind: llm.EventReasoning, Text: "thinking"}}, text("done")...), nil
	}}
	a := newAgent(t, m, toolSet{"echo": &echoTool{name: "echo"}})
	var rec recorder
	if _, err := a.Prompt(t.Context(), agent.Input{Text: "go"}, rec.emit); err != nil {
		t.Fatal(err)
	}
	h := a.History()
	msgs := h.Messages()
	if len(msgs) != 4 {
		t.Fatalf("history has %d messages", len(msgs))
	}
	if msgs[1].Reasoning == nil || *msgs[1].Reasoning != "" {
		t.Fatalf("empty reasoning not kept: %+v", msgs[1])
	}
	if msgs[3].Reasoning == nil || *msgs[3].Reasoning != "thinking" {
		t.Fatalf("reasoning not kept: %+v", msgs[3])
	}
	thoughts := rec.count(func(e agent.Event) bool {
		_, ok := e.(agent.ThoughtChunk)
		return ok
	})
	if thoughts != 1 {
		t.Fatalf("want 1 thought chunk (empty reasoning emits none), got %d", thoughts)
	}
}

func TestPrompt_ToolCallLifecycleAndResultsInOrder(t *testing.T) {
	echo := &echoTool{name: "echo", block: make(chan struct{})}
	m := &funcModel{reply: func(ctx context.Context, req *llm.Request) ([]llm.Event, error) {
		if step(req) == 0 {
			var calls []llm.ToolCall
			for i := range 5 {
				calls = append(calls, llm.ToolCall{ID: fmt.Sprint("c", i), Name: "echo", Arguments: fmt.Sprintf(`{"text":"%d"}`, i)})
			}
			return toolCalls(calls...), nil
		}
		var tools []string
		for _, msg := range req.Messages {
			if msg.Role == llm.RoleTool {
				tools = append(tools, msg.ToolCallID+"="+msg.Content)
			}
		}
		return text(strings.Join(tools, ",")), nil
	}}
	a := newAgent(t, m, toolSet{"echo": echo})
	var rec recorder
	done := make(chan struct{})
	var res agent.Result
	go func() {
		defer close(done)
		var err error
		res, err = a.Prompt(t.Context(), agent.Input{Text: "go"}, rec.emit)
		if err != nil {
			t.Error(err)
		}
	}()
	// All five calls run at once before any returns: they are parallel.
	waitFor(t, func() bool { return echo.running.Load() == 5 })
	close(echo.block)
	<-done
	want := "c0=echo:0,c1=echo:1,c2=echo:2,c3=echo:3,c4=echo:4"
	if res.LastMessage == nil || res.LastMessage.Content != want {
		t.Fatalf("results out of order: %+v", res.LastMessage)
	}
	status := map[string][]agent.ToolStatus{}
	for _, e := range rec.events() {
		switch e := e.(type) {
		case agent.ToolCallStarted:
			status[e.ID] = append(status[e.ID], agent.ToolPending)
		case agent.ToolCallUpdated:
			if e.Status != "" {
				status[e.ID] = append(status[e.ID], e.Status)
			}
		}
	}
	if len(status) != 5 {
		t.Fatalf("want 5 tool calls, got %d", len(status))
	}
	for id, s := range status {
		if fmt.Sprint(s) != "[pending in_progress completed]" {
			t.Errorf("call %s went %v", id, s)
		}
	}
}

func TestPrompt_UnknownToolAndBadArgumentsAreToolErrorsTheModelSees(t *testing.T) {
	m := &funcModel{reply: func(ctx context.Context, req *llm.Request) ([]llm.Event, error) {
		switch step(req) {
		case 0:
			return toolCalls(llm.ToolCall{ID: "a", Name: "nope", Arguments: `{}`}, llm.ToolCall{ID: "b", Name: "echo", Arguments: `{"text":`}), nil
		default:
			return text(lastTool(req)), nil
		}
	}}
	a := newAgent(t, m, toolSet{"echo": &echoTool{name: "echo"}})
	var rec recorder
	res, err := a.Prompt(t.Context(), agent.Input{Text: "go"}, rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != agent.StopEndTurn || !strings.Contains(res.LastMessage.Content, "not valid JSON") {
		t.Fatalf("result %+v", res)
	}
	msgs := a.History().Messages()
	if !strings.Contains(msgs[2].Content, `no tool named "nope"`) {
		t.Fatalf("unknown tool message: %q", msgs[2].Content)
	}
	failed := rec.count(func(e agent.Event) bool {
		u, ok := e.(agent.ToolCallUpdated)
		return ok && u.Status == agent.ToolFailed
	})
	if failed != 2 {
		t.Fatalf("want 2 failed calls, got %d", failed)
	}
}

func TestPrompt_CancelStopsModelAndToolsAndEndsCancelled(t *testing.T) {
	echo := &echoTool{name: "echo", block: make(chan struct{})}
	m := &funcModel{reply: func(ctx context.Context, req *llm.Request) ([]llm.Event, error) {
		return toolCalls(llm.ToolCall{ID: "a", Name: "echo", Arguments: `{"text":"x"}`}, llm.ToolCall{ID: "b", Name: "echo", Arguments: `{"text":"y"}`}), nil
	}}
	a := newAgent(t, m, toolSet{"echo": echo})
	ctx, cancel := context.WithCancel(t.Context())
	var rec recorder
	done := make(chan agent.Result)
	go func() {
		res, err := a.Prompt(ctx, agent.Input{Text: "go"}, rec.emit)
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	waitFor(t, func() bool { return echo.running.Load() == 2 })
	cancel()
	res := <-done
	if res.StopReason != agent.StopCancelled {
		t.Fatalf("stop reason %q", res.StopReason)
	}
	// Both calls ended failed, and the history stays valid: every tool call
	// has an answer.
	msgs := a.History().Messages()
	if len(msgs) != 4 || msgs[2].Role != llm.RoleTool || msgs[3].Role != llm.RoleTool {
		t.Fatalf("history after cancel: %+v", msgs)
	}
	// The agent runs its next turn normally.
	m.reply = func(ctx context.Context, req *llm.Request) ([]llm.Event, error) { return text("ok"), nil }
	nextTurnEnds(t, a, "again")
}

func TestPrompt_CancelDuringModelStream(t *testing.T) {
	started := make(chan struct{})
	m := &funcModel{reply: func(ctx context.Context, req *llm.Request) ([]llm.Event, error) {
		close(started)
		<-ctx.Done()
		return []llm.Event{{Kind: llm.EventText, Text: "partial"}}, ctx.Err()
	}}
	a := newAgent(t, m, nil)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan agent.Result)
	go func() {
		res, err := a.Prompt(ctx, agent.Input{Text: "go"}, func(agent.Event) {})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	<-started
	cancel()
	if res := <-done; res.StopReason != agent.StopCancelled {
		t.Fatalf("stop reason %q", res.StopReason)
	}
}

func TestPrompt_ModelFailureIsAnErrorAndTheAgentLivesOn(t *testing.T) {
	fail := true
	m := &funcModel{reply: func(ctx context.Context, req *llm.Request) ([]llm.Event, error) {
		if fail {
			return text("x")[:1], llm.NewAPIError(500, "", "server exploded", "", false, nil)
		}
		return text("fine"), nil
	}}
	a := newAgent(t, m, nil)
	_, err := a.Prompt(t.Context(), agent.Input{Text: "go"}, func(agent.Event) {})
	var apiErr *llm.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 500 {
		t.Fatalf("want the API error, got %v", err)
	}
	fail = false
	nextTurnEnds(t, a, "go")
}

func TestPrompt_StreamWithoutFinishIsAnError(t *testing.T) {
	m := &funcModel{reply: func(ctx context.Context, req *llm.Request) ([]llm.Event, error) {
		return []llm.Event{{Kind: llm.EventText, Text: "cut"}}, nil
	}}
	a := newAgent(t, m, nil)
	_, err := a.Prompt(t.Context(), agent.Input{Text: "go"}, func(agent.Event) {})
	if !errors.Is(err, llm.ErrTruncated) {
		t.Fatalf("want ErrTruncated, got %v", err)
	}
}

func TestPrompt_FinishReasonsMapToStopReasons(t *testing.T) {
	for _, tc := range []struct {
		finish llm.FinishReason
		want   agent.StopReason
	}{
		{llm.FinishStop, agent.StopEndTurn},
		{llm.FinishLength, agent.StopMaxTokens},
		{llm.FinishContentFilter, agent.StopRefusal},
	} {
		t.Run(string(tc.finish), func(t *testing.T) {
			m := &funcModel{reply: func(ctx context.Context, req *llm.Request) ([]llm.Event, error) {
				return []llm.Event{{Kind: llm.EventText, Text: "x"}, {Kind: llm.EventFinish, Finish: tc.finish}}, nil
			}}
			a := newAgent(t, m, nil)
			res, err := a.Prompt(t.Context(), agent.Input{Text: "go"}, func(agent.Event) {})
			if err != nil || res.StopReason != tc.want {
				t.Fatalf("%+v %v", res, err)
			}
			if tc.want == agent.StopRefusal && a.History().Len() != 0 {
				t.Fatalf("a refused turn stays out of the context, history has %d", a.History().Len())
			}
		})
	}
}

func TestPrompt_MaxTurnRequestsCapsModelCalls(t *testing.T) {
	m := &funcModel{reply: func(ctx context.Context, req *llm.Request) ([]llm.Event, error) {
		return toolCalls(llm.ToolCall{ID: "a", Name: "echo", Arguments: `{"text":"again"}`}), nil
	}}
	a := agent.New(agent.Options{ID: t.Name(), Model: m, Tools: toolSet{"echo": &echoTool{name: "echo"}}, MaxTurnRequests: 3})
	defer a.Close()
	res, err := a.Prompt(t.Context(), agent.Input{Text: "loop"}, func(agent.Event) {})
	if err != nil || res.StopReason != agent.StopMaxTurnRequests {
		t.Fatalf("%+v %v", res, err)
	}
	if n := m.calls.Load(); n != 3 {
		t.Fatalf("model called %d times", n)
	}
}

func TestPrompt_ToolPanicFailsTheTurnButNotTheAgent(t *testing.T) {
	m := &funcModel{reply: func(ctx context.Context, req *llm.Request) ([]llm.Event, error) {
		if step(req) == 0 {
			return toolCalls(llm.ToolCall{ID: "a", Name: "bad", Arguments: `{}`}), nil
		}
		return text("after"), nil
	}}
	a := newAgent(t, m, toolSet{"bad": &echoTool{name: "bad", panics: true}})
	_, err := a.Prompt(t.Context(), agent.Input{Text: "go"}, func(agent.Event) {})
	if err == nil || !strings.Contains(err.Error(), "panicked") {
		t.Fatalf("want a panic error, got %v", err)
	}
	if a.Running() {
		t.Fatal("agent still running")
	}
}

func TestPrompt_SystemPromptFailureIsContained(t *testing.T) {
	fail := true
	m := &funcModel{reply: func(ctx context.Context, req *llm.Request) ([]llm.Event, error) {
		if req.System != "sys" {
			return nil, errors.New("no system prompt")
		}
		return text("ok"), nil
	}}
	a := agent.New(agent.Options{ID: t.Name(), Model: m, System: func(context.Context) (string, error) {
		if fail {
			return "", errors.New("unknown variable {{cwd}}")
		}
		return "sys", nil
	}})
	defer a.Close()
	if _, err := a.Prompt(t.Context(), agent.Input{Text: "go"}, func(agent.Event) {}); err == nil {
		t.Fatal("want a render error")
	}
	fail = false
	nextTurnEnds(t, a, "go")
}

func TestPrompt_SecondConcurrentPromptIsBusy(t *testing.T) {
	release := make(chan struct{})
	m := &funcModel{reply: func(ctx context.Context, req *llm.Request) ([]llm.Event, error) {
		<-release
		return text("x"), nil
	}}
	a := newAgent(t, m, nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = a.Prompt(t.Context(), agent.Input{Text: "1"}, func(agent.Event) {})
	}()
	waitFor(t, a.Running)
	if _, err := a.Prompt(t.Context(), agent.Input{Text: "2"}, func(agent.Event) {}); !errors.Is(err, agent.ErrBusy) {
		t.Fatalf("want ErrBusy, got %v", err)
	}
	close(release)
	<-done
}

func TestCompletedHistoryExcludesTheRunningTurn(t *testing.T) {
	var seen int
	var a *agent.Agent
	m := &funcModel{reply: func(ctx context.Context, req *llm.Request) ([]llm.Event, error) {
		h := a.CompletedHistory()
		seen = h.Len()
		return text("ok"), nil
	}}
	a = newAgent(t, m, nil)
	for range 2 {
		if _, err := a.Prompt(t.Context(), agent.Input{Text: "q"}, func(agent.Event) {}); err != nil {
			t.Fatal(err)
		}
	}
	if seen != 2 {
		t.Fatalf("during turn 2 the completed history has %d messages, want 2", seen)
	}
}

// compactingModel answers the summariser with SUMMARY, or with an error
// while *fail is set, and every other call with a long answer that fills
// a context window of 1000 tokens: each turn after the first compacts.
func compactingModel(fail *bool) *funcModel {
	return &funcModel{reply: func(ctx context.Context, req *llm.Request) ([]llm.Event, error) {
		if strings.Contains(req.System, "summarising") {
			if *fail {
				return nil, errors.New("summariser down")
			}
			return text("SUMMARY"), nil
		}
		return []llm.Event{
			{Kind: llm.EventText, Text: strings.Repeat("w", 400)},
			{Kind: llm.EventUsage, Usage: &llm.Usage{InputTokens: 900, OutputTokens: 100}},
			{Kind: llm.EventFinish, Finish: llm.FinishStop},
		}, nil
	}}
}

func TestCompactionSummarisesOlderTurns(t *testing.T) {
	m := compactingModel(new(bool))
	var resets int
	a := agent.New(agent.Options{ID: t.Name(), Model: m, ContextWindow: 1000, OnReset: func([]llm.Message) { resets++ }})
	defer a.Close()
	for range 3 {
		if _, err := a.Prompt(t.Context(), agent.Input{Text: "q"}, func(agent.Event) {}); err != nil {
			t.Fatal(err)
		}
	}
	msgs := a.History().Messages()
	if resets == 0 || !strings.Contains(msgs[0].Content, "SUMMARY") {
		t.Fatalf("no compaction: resets=%d first=%q", resets, msgs[0].Content)
	}
	if len(msgs) != 3 || msgs[1].Content != "q" || msgs[2].Role != llm.RoleAssistant {
		t.Fatalf("want summary + the last exchange's user message and answer, got %d messages", len(msgs))
	}
}

func TestCompactionIsAnnouncedAndEndsOnceWithItsSummaryOrItsFailure(t *testing.T) {
	fail := false
	m := compactingModel(&fail)
	a := agent.New(agent.Options{ID: t.Name(), Model: m, ContextWindow: 1000})
	defer a.Close()
	var events []agent.Event
	record := func(e agent.Event) {
		switch e.(type) {
		case agent.CompactionStarted, agent.CompactionEnded:
			events = append(events, e)
		}
	}
	for range 2 {
		if _, err := a.Prompt(t.Context(), agent.Input{Text: "q"}, record); err != nil {
			t.Fatal(err)
		}
	}
	if len(events) != 2 {
		t.Fatalf("events %+v, want one compaction started and ended", events)
	}
	start, ok1 := events[0].(agent.CompactionStarted)
	end, ok2 := events[1].(agent.CompactionEnded)
	if !ok1 || !ok2 || start.ID == "" || end.ID != start.ID || end.Summary != "SUMMARY" || end.Failure != "" || end.Cancelled {
		t.Fatalf("events %+v", events)
	}
	fail, events = true, nil
	if _, err := a.Prompt(t.Context(), agent.Input{Text: "q"}, record); err == nil {
		t.Fatal("a turn whose compaction failed did not fail")
	}
	if len(events) != 2 {
		t.Fatalf("events %+v, want a failed compaction", events)
	}
	if end, ok := events[1].(agent.CompactionEnded); !ok || !strings.Contains(end.Failure, "summariser down") || end.ID == start.ID || end.ID != events[0].(agent.CompactionStarted).ID {
		t.Fatalf("events %+v", events)
	}
}

func TestHistoryPrefixSharesAndIsolates(t *testing.T) {
	h := agent.NewHistory()
	for i := range 10 {
		h.Append(llm.Message{Role: llm.RoleUser, Content: fmt.Sprint(i)})
	}
	child := h.Prefix(6)
	child.Append(llm.Message{Role: llm.RoleUser, Content: "child"})
	h.Append(llm.Message{Role: llm.RoleUser, Content: "parent"})
	if child.Len() != 7 || child.At(6).Content != "child" || child.At(5).Content != "5" {
		t.Fatalf("child %v", child.Messages())
	}
	if h.Len() != 11 || h.At(6).Content != "6" || h.At(10).Content != "parent" {
		t.Fatalf("parent %v", h.Messages())
	}
	grand := child.Prefix(7)
	grand.Append(llm.Message{Role: llm.RoleUser, Content: "grand"})
	if got := len(grand.Messages()); got != 8 || grand.At(7).Content != "grand" || child.Len() != 7 {
		t.Fatalf("grandchild %d", got)
	}
}

func TestRegistryReachesLiveAgents(t *testing.T) {
	var reg agent.Registry
	a := agent.New(agent.Options{ID: "x", Model: &funcModel{}, Registry: &reg})
	if got, ok := reg.Get("x"); !ok || got != a {
		t.Fatal("agent not registered")
	}
	a.Close()
	if _, ok := reg.Get("x"); ok {
		t.Fatal("closed agent still registered")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(time.Millisecond)
	}
}
