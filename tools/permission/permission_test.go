package permission

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/dshd/dshd/tools"
)

// scriptedAsker answers with the next of its answers and counts questions.
type scriptedAsker struct {
	mu      sync.Mutex
	answers []Answer
	asked   []tools.PermissionRequest
}

func (a *scriptedAsker) Ask(_ context.Context, req tools.PermissionRequest) (Answer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, req)
	if len(a.answers) == 0 {
		return RejectOnce, nil
	}
	ans := a.answers[0]
	a.answers = a.answers[1:]
	return ans, nil
}

func (a *scriptedAsker) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.asked)
}

func TestPolicyModes(t *testing.T) {
	tests := []struct {
		mode   Mode
		effect tools.Effect
		asks   bool
	}{
		{ModeAsk, tools.EffectRead, false},
		{ModeAsk, tools.EffectEdit, true},
		{ModeAsk, tools.EffectExecute, true},
		{ModeAcceptEdits, tools.EffectRead, false},
		{ModeAcceptEdits, tools.EffectEdit, false},
		{ModeAcceptEdits, tools.EffectExecute, true},
		{ModeYolo, tools.EffectRead, false},
		{ModeYolo, tools.EffectEdit, false},
		{ModeYolo, tools.EffectExecute, false},
	}
	for _, tc := range tests {
		name := string(tc.mode) + " mode " + map[bool]string{true: "asks", false: "does not ask"}[tc.asks] + " for " + tc.effect.String()
		t.Run(name, func(t *testing.T) {
			a := &scriptedAsker{answers: []Answer{AllowOnce}}
			p := NewPolicy(tc.mode, a)
			d, err := p.Check(t.Context(), tools.PermissionRequest{ToolName: "x", Effect: tc.effect})
			if err != nil || d != tools.Allowed {
				t.Fatalf("Check = %v, %v", d, err)
			}
			if asked := a.count() == 1; asked != tc.asks {
				t.Errorf("asked = %v, want %v", asked, tc.asks)
			}
		})
	}
}

func TestPolicyAnswers(t *testing.T) {
	edit := func(tool string) tools.PermissionRequest {
		return tools.PermissionRequest{ToolName: tool, Effect: tools.EffectEdit}
	}
	t.Run("allow once and reject once are not remembered", func(t *testing.T) {
		a := &scriptedAsker{answers: []Answer{AllowOnce, RejectOnce, AllowOnce}}
		p := NewPolicy(ModeAsk, a)
		for i, want := range []tools.Decision{tools.Allowed, tools.Rejected, tools.Allowed} {
			if d, _ := p.Check(t.Context(), edit("w")); d != want {
				t.Errorf("check %d = %v, want %v", i, d, want)
			}
		}
		if a.count() != 3 {
			t.Errorf("asked %d times, want 3", a.count())
		}
	})
	t.Run("allow always is remembered for that tool only", func(t *testing.T) {
		a := &scriptedAsker{answers: []Answer{AllowAlways, RejectOnce}}
		p := NewPolicy(ModeAsk, a)
		for range 3 {
			if d, _ := p.Check(t.Context(), edit("write_file")); d != tools.Allowed {
				t.Fatalf("write_file = %v", d)
			}
		}
		if d, _ := p.Check(t.Context(), edit("edit_file")); d != tools.Rejected {
			t.Errorf("edit_file = %v, want a question answered reject", d)
		}
		if a.count() != 2 {
			t.Errorf("asked %d times, want 2", a.count())
		}
	})
	t.Run("reject always is remembered, even in yolo mode", func(t *testing.T) {
		a := &scriptedAsker{answers: []Answer{RejectAlways}}
		p := NewPolicy(ModeAsk, a)
		for range 2 {
			if d, _ := p.Check(t.Context(), edit("run")); d != tools.Rejected {
				t.Fatalf("= %v", d)
			}
		}
		if err := p.SetMode(ModeYolo); err != nil {
			t.Fatal(err)
		}
		if d, _ := p.Check(t.Context(), edit("run")); d != tools.Rejected {
			t.Errorf("yolo after reject always = %v", d)
		}
		if a.count() != 1 {
			t.Errorf("asked %d times, want 1", a.count())
		}
	})
	t.Run("a cancelled answer is Cancelled", func(t *testing.T) {
		p := NewPolicy(ModeAsk, &scriptedAsker{answers: []Answer{AnswerCancelled}})
		if d, err := p.Check(t.Context(), edit("w")); d != tools.Cancelled || err != nil {
			t.Errorf("= %v, %v", d, err)
		}
	})
	t.Run("an unknown answer is a rejection", func(t *testing.T) {
		p := NewPolicy(ModeAsk, &scriptedAsker{answers: []Answer{"maybe"}})
		if d, _ := p.Check(t.Context(), edit("w")); d != tools.Rejected {
			t.Errorf("= %v", d)
		}
	})
	t.Run("an asker error is returned", func(t *testing.T) {
		boom := errors.New("connection closed")
		p := NewPolicy(ModeAsk, AskerFunc(func(context.Context, tools.PermissionRequest) (Answer, error) { return "", boom }))
		if _, err := p.Check(t.Context(), edit("w")); !errors.Is(err, boom) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("no asker refuses what would be asked", func(t *testing.T) {
		p := NewPolicy(ModeAsk, nil)
		if d, _ := p.Check(t.Context(), edit("w")); d != tools.Refused {
			t.Errorf("= %v", d)
		}
	})
}

// The bubble's goroutines are all the test waits on; a deadlock fails
// the test (synctest), with no clock involved.
func TestPolicyCancelWhilePending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pending := make(chan struct{})
		release := make(chan Answer)
		finished := make(chan struct{})
		calls := 0
		asker := AskerFunc(func(ctx context.Context, req tools.PermissionRequest) (Answer, error) {
			calls++ // Checks below never overlap
			if calls > 1 {
				return RejectOnce, nil
			}
			defer close(finished)
			close(pending)
			return <-release, nil // an asker that ignores ctx: the worst case
		})
		p := NewPolicy(ModeAsk, asker)
		ctx, cancel := context.WithCancel(t.Context())
		decided := make(chan tools.Decision, 1)
		go func() {
			d, _ := p.Check(ctx, tools.PermissionRequest{ToolName: "w", Effect: tools.EffectExecute})
			decided <- d
		}()
		<-pending
		cancel()
		if d := <-decided; d != tools.Cancelled {
			t.Fatalf("decision = %v, want cancelled", d)
		}
		// The late answer is ignored, and not remembered: the next call asks
		// again (and is rejected) instead of being allowed.
		release <- AllowAlways
		<-finished
		if d, _ := p.Check(t.Context(), tools.PermissionRequest{ToolName: "w", Effect: tools.EffectExecute}); d != tools.Rejected || calls != 2 {
			t.Errorf("after a late allow_always: decision %v after %d questions", d, calls)
		}
		// A context cancelled before asking is cancelled at once.
		if d, _ := p.Check(ctx, tools.PermissionRequest{ToolName: "x", Effect: tools.EffectEdit}); d != tools.Cancelled {
			t.Errorf("cancelled before asking = %v", d)
		}
	})
}

func TestPolicySetMode(t *testing.T) {
	p := NewPolicy("bogus", nil)
	if p.Mode() != ModeAsk {
		t.Errorf("unknown mode became %q, want ask", p.Mode())
	}
	if err := p.SetMode("nope"); err == nil {
		t.Error("SetMode accepted an unknown mode")
	}
	for _, m := range Modes() {
		if err := p.SetMode(m.ID); err != nil || p.Mode() != m.ID {
			t.Errorf("SetMode(%q) = %v, mode %q", m.ID, err, p.Mode())
		}
		if m.Name == "" || m.Description == "" {
			t.Errorf("mode %q has no name or description", m.ID)
		}
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				p.SetMode(ModeYolo)
				p.Check(t.Context(), tools.PermissionRequest{Effect: tools.EffectEdit})
				_ = p.Mode()
			}
		})
	}
	wg.Wait()
}

func TestDenyAllAndForChild(t *testing.T) {
	for _, e := range []tools.Effect{tools.EffectEdit, tools.EffectExecute} {
		if d, err := DenyAll.Check(t.Context(), tools.PermissionRequest{Effect: e}); d != tools.Refused || err != nil {
			t.Errorf("DenyAll %v = %v, %v", e, d, err)
		}
	}
	if d, _ := DenyAll.Check(t.Context(), tools.PermissionRequest{Effect: tools.EffectRead}); d != tools.Allowed {
		t.Errorf("DenyAll read = %v", d)
	}
	a := &scriptedAsker{answers: []Answer{AllowOnce, AllowOnce}}
	parent := NewPolicy(ModeAsk, a)
	child := ForChild(parent, "sub-1", false)
	if d, _ := child.Check(t.Context(), tools.PermissionRequest{Effect: tools.EffectEdit}); d != tools.Allowed {
		t.Fatalf("= %v", d)
	}
	if a.asked[0].Requester != "sub-1" {
		t.Errorf("Requester = %q", a.asked[0].Requester)
	}
	// A grandchild's request keeps the grandchild's label on its way up.
	grandchild := ForChild(child, "sub-1/sub-2", false)
	if d, _ := grandchild.Check(t.Context(), tools.PermissionRequest{Effect: tools.EffectEdit}); d != tools.Allowed {
		t.Fatalf("= %v", d)
	}
	if a.asked[1].Requester != "sub-1/sub-2" {
		t.Errorf("Requester = %q, want the grandchild's", a.asked[1].Requester)
	}
	// A child pinned to deny is refused without asking, even under a
	// parent that would allow.
	pinned := ForChild(NewPolicy(ModeYolo, a), "sub-3", true)
	if d, _ := pinned.Check(t.Context(), tools.PermissionRequest{Effect: tools.EffectEdit}); d != tools.Refused || a.count() != 2 {
		t.Errorf("pinned child = %v after %d questions", d, a.count())
	}
}

// The rule for cancelled holds for every caller: a gate that fails while
// the work is cancelled decided Cancelled, one that fails otherwise is a
// rejection with its error, and a tool gets tools.ErrCancelled.
func TestDecideAndPermit(t *testing.T) {
	boom := errors.New("connection closed")
	failing := AskerFunc(func(context.Context, tools.PermissionRequest) (Answer, error) { return "", boom })
	req := tools.PermissionRequest{ToolName: "w", Effect: tools.EffectEdit}

	if d, err := Decide(t.Context(), nil, req); d != tools.Allowed || err != nil {
		t.Errorf("no gate = %v, %v", d, err)
	}
	if d, err := Decide(t.Context(), NewPolicy(ModeAsk, failing), req); d != tools.Rejected || !errors.Is(err, boom) {
		t.Errorf("failing gate = %v, %v", d, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	failingGate := gateFunc(func(context.Context, tools.PermissionRequest) (tools.Decision, error) { return 0, boom })
	if d, err := Decide(ctx, failingGate, req); d != tools.Cancelled || err != nil {
		t.Errorf("a gate failing after the cancel = %v, %v", d, err)
	}

	call := &tools.Call{ID: "tc_1", Input: []byte(`{"path":"a"}`), Env: &tools.Env{Permission: NewPolicy(ModeAsk, &scriptedAsker{answers: []Answer{AnswerCancelled}})}}
	if d, err := Permit(t.Context(), call, req); d != tools.Cancelled || !errors.Is(err, tools.ErrCancelled) || !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled answer = %v, %v", d, err)
	}
	asker := &scriptedAsker{answers: []Answer{RejectOnce}}
	call.Env.Permission = NewPolicy(ModeAsk, asker)
	if d, err := Permit(t.Context(), call, req); d != tools.Rejected || err != nil {
		t.Errorf("a rejection = %v, %v", d, err)
	}
	if got := asker.asked[0]; got.ToolCallID != "tc_1" || string(got.RawInput.(json.RawMessage)) != `{"path":"a"}` {
		t.Errorf("the request was not stamped with the call: %+v", got)
	}
	if d, err := Permit(t.Context(), &tools.Call{ID: "tc_2"}, req); d != tools.Allowed || err != nil {
		t.Errorf("a call without an environment = %v, %v", d, err)
	}
}

// Check answers the model the way Permit decides: a rejection is a result
// in Rejection's words, a cancelled answer an error, an allowed call nil.
func TestCheck(t *testing.T) {
	req := tools.PermissionRequest{ToolName: "w", Effect: tools.EffectEdit}
	call := func(answer Answer) *tools.Call {
		return &tools.Call{ID: "tc_1", Env: &tools.Env{Permission: NewPolicy(ModeAsk, &scriptedAsker{answers: []Answer{answer}})}}
	}
	if res, err := Check(t.Context(), call(AllowOnce), req, "this edit"); res != nil || err != nil {
		t.Errorf("an allowed call = %+v, %v", res, err)
	}
	res, err := Check(t.Context(), call(RejectOnce), req, "this edit")
	if err != nil || res == nil || !res.IsError || res.Output != Rejection(tools.Rejected, "this edit") {
		t.Errorf("a rejection = %+v, %v", res, err)
	}
	if res, err := Check(t.Context(), call(AnswerCancelled), req, "this edit"); res != nil || !errors.Is(err, tools.ErrCancelled) {
		t.Errorf("a cancelled answer = %+v, %v", res, err)
	}
}

type gateFunc func(ctx context.Context, req tools.PermissionRequest) (tools.Decision, error)

func (f gateFunc) Check(ctx context.Context, req tools.PermissionRequest) (tools.Decision, error) {
	return f(ctx, req)
}
