package tools

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// scriptedAsker answers with the next of its answers and counts questions.
type scriptedAsker struct {
	mu      sync.Mutex
	answers []Answer
	asked   []PermissionRequest
}

func (a *scriptedAsker) Ask(_ context.Context, req PermissionRequest) (Answer, error) {
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
		effect Effect
		asks   bool
	}{
		{ModeAsk, EffectRead, false},
		{ModeAsk, EffectEdit, true},
		{ModeAsk, EffectExecute, true},
		{ModeAcceptEdits, EffectRead, false},
		{ModeAcceptEdits, EffectEdit, false},
		{ModeAcceptEdits, EffectExecute, true},
		{ModeYolo, EffectRead, false},
		{ModeYolo, EffectEdit, false},
		{ModeYolo, EffectExecute, false},
	}
	for _, tc := range tests {
		name := string(tc.mode) + " mode " + map[bool]string{true: "asks", false: "does not ask"}[tc.asks] + " for " + tc.effect.String()
		t.Run(name, func(t *testing.T) {
			a := &scriptedAsker{answers: []Answer{AllowOnce}}
			p := NewPolicy(tc.mode, a)
			d, err := p.Check(t.Context(), PermissionRequest{ToolName: "x", Effect: tc.effect})
			if err != nil || d != Allowed {
				t.Fatalf("Check = %v, %v", d, err)
			}
			if asked := a.count() == 1; asked != tc.asks {
				t.Errorf("asked = %v, want %v", asked, tc.asks)
			}
		})
	}
}

func TestPolicyAnswers(t *testing.T) {
	edit := func(tool string) PermissionRequest { return PermissionRequest{ToolName: tool, Effect: EffectEdit} }
	t.Run("allow once and reject once are not remembered", func(t *testing.T) {
		a := &scriptedAsker{answers: []Answer{AllowOnce, RejectOnce, AllowOnce}}
		p := NewPolicy(ModeAsk, a)
		for i, want := range []Decision{Allowed, Rejected, Allowed} {
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
			if d, _ := p.Check(t.Context(), edit("write_file")); d != Allowed {
				t.Fatalf("write_file = %v", d)
			}
		}
		if d, _ := p.Check(t.Context(), edit("edit_file")); d != Rejected {
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
			if d, _ := p.Check(t.Context(), edit("run")); d != Rejected {
				t.Fatalf("= %v", d)
			}
		}
		if err := p.SetMode(ModeYolo); err != nil {
			t.Fatal(err)
		}
		if d, _ := p.Check(t.Context(), edit("run")); d != Rejected {
			t.Errorf("yolo after reject always = %v", d)
		}
		if a.count() != 1 {
			t.Errorf("asked %d times, want 1", a.count())
		}
	})
	t.Run("a cancelled answer is Cancelled", func(t *testing.T) {
		p := NewPolicy(ModeAsk, &scriptedAsker{answers: []Answer{AnswerCancelled}})
		if d, err := p.Check(t.Context(), edit("w")); d != Cancelled || err != nil {
			t.Errorf("= %v, %v", d, err)
		}
	})
	t.Run("an unknown answer is a rejection", func(t *testing.T) {
		p := NewPolicy(ModeAsk, &scriptedAsker{answers: []Answer{"maybe"}})
		if d, _ := p.Check(t.Context(), edit("w")); d != Rejected {
			t.Errorf("= %v", d)
		}
	})
	t.Run("an asker error is returned", func(t *testing.T) {
		boom := errors.New("connection closed")
		p := NewPolicy(ModeAsk, AskerFunc(func(context.Context, PermissionRequest) (Answer, error) { return "", boom }))
		if _, err := p.Check(t.Context(), edit("w")); !errors.Is(err, boom) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("no asker rejects what would be asked", func(t *testing.T) {
		p := NewPolicy(ModeAsk, nil)
		if d, _ := p.Check(t.Context(), edit("w")); d != Rejected {
			t.Errorf("= %v", d)
		}
	})
}

func TestPolicyCancelWhilePending(t *testing.T) {
	pending := make(chan struct{})
	release := make(chan Answer)
	finished := make(chan struct{})
	calls := 0
	asker := AskerFunc(func(ctx context.Context, req PermissionRequest) (Answer, error) {
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
	decided := make(chan Decision, 1)
	go func() {
		d, _ := p.Check(ctx, PermissionRequest{ToolName: "w", Effect: EffectExecute})
		decided <- d
	}()
	await(t, pending, "the question")
	cancel()
	if d := await(t, decided, "the decision"); d != Cancelled {
		t.Fatalf("decision = %v, want Cancelled", d)
	}
	// The late answer is ignored, and not remembered: the next call asks
	// again (and is rejected) instead of being allowed.
	release <- AllowAlways
	await(t, finished, "the asker to return")
	if d, _ := p.Check(t.Context(), PermissionRequest{ToolName: "w", Effect: EffectExecute}); d != Rejected || calls != 2 {
		t.Errorf("after a late allow_always: decision %v after %d questions", d, calls)
	}
	t.Run("a context cancelled before asking is Cancelled", func(t *testing.T) {
		if d, _ := p.Check(ctx, PermissionRequest{ToolName: "x", Effect: EffectEdit}); d != Cancelled {
			t.Errorf("= %v", d)
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
				p.Check(t.Context(), PermissionRequest{Effect: EffectEdit})
				_ = p.Mode()
			}
		})
	}
	wg.Wait()
}

func TestDenyAllAndRequester(t *testing.T) {
	for _, e := range []Effect{EffectEdit, EffectExecute} {
		if d, err := DenyAll.Check(t.Context(), PermissionRequest{Effect: e}); d != Rejected || err != nil {
			t.Errorf("DenyAll %v = %v, %v", e, d, err)
		}
	}
	if d, _ := DenyAll.Check(t.Context(), PermissionRequest{Effect: EffectRead}); d != Allowed {
		t.Errorf("DenyAll read = %v", d)
	}
	a := &scriptedAsker{answers: []Answer{AllowOnce}}
	child := WithRequester(NewPolicy(ModeAsk, a), "sub-1")
	if d, _ := child.Check(t.Context(), PermissionRequest{Effect: EffectEdit}); d != Allowed {
		t.Fatalf("= %v", d)
	}
	if a.asked[0].Requester != "sub-1" {
		t.Errorf("Requester = %q", a.asked[0].Requester)
	}
}
