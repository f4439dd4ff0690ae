// This file tests that the system prompt a turn sends follows what it is
// rendered from — the model, the date, the project's AGENTS.md — although
// a session reuses the prompt it rendered last while none of them changed.

package session

import (
	"context"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/agent/llm/scripted"
	"github.com/dshd/dshd/prompt"
)

// systemRecorder is a model that keeps the system prompt of every request
// and answers through the scripted model.
type systemRecorder struct {
	llm.Model
	mu      sync.Mutex
	systems []string
}

func (r *systemRecorder) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	r.mu.Lock()
	r.systems = append(r.systems, req.System)
	r.mu.Unlock()
	return r.Model.Stream(ctx, req)
}

func (r *systemRecorder) last(t *testing.T) string {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.systems) == 0 {
		t.Fatal("the model got no request")
	}
	return r.systems[len(r.systems)-1]
}

func TestSystemPromptFollowsModelDateAndInstructions(t *testing.T) {
	inner, err := scripted.New(scripted.Script{Rules: []scripted.Rule{{Text: "ok"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	model := &systemRecorder{Model: inner}
	cwd := t.TempDir()
	var clock sync.Mutex
	now := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	s, err := New(t.Context(), Config{ID: "s1", Cwd: cwd, Model: model, ModelID: "model-one", Now: func() time.Time {
		clock.Lock()
		defer clock.Unlock()
		return now
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })

	turn := func(want ...string) string {
		t.Helper()
		if _, err := runTurn(t, s, "hi"); err != nil {
			t.Fatal(err)
		}
		got := model.last(t)
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Fatalf("system prompt lacks %q:\n%s", w, got)
			}
		}
		return got
	}
	first := turn("2026-03-04", "model-one")
	if again := turn(); again != first {
		t.Fatalf("nothing changed, yet the system prompt did:\n%s\n---\n%s", first, again)
	}

	s.SetModel("model-two")
	if got := turn("model-two"); strings.Contains(got, "model-one") {
		t.Fatalf("the system prompt still names the old model:\n%s", got)
	}

	clock.Lock()
	now = now.AddDate(0, 0, 1)
	clock.Unlock()
	turn("2026-03-05")

	if err := os.WriteFile(filepath.Join(cwd, prompt.ProjectInstructionsFile), []byte("RULE-ONE"), 0o600); err != nil {
		t.Fatal(err)
	}
	turn("RULE-ONE")
	// Another size, so the instructions cache sees the edit whatever the
	// file system's time resolution.
	if err := os.WriteFile(filepath.Join(cwd, prompt.ProjectInstructionsFile), []byte("RULE-TWO, longer"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := turn("RULE-TWO, longer"); strings.Contains(got, "RULE-ONE") {
		t.Fatalf("the system prompt still holds the old instructions:\n%s", got)
	}
}
