// This file tests that the system prompt a turn sends follows what it is
// rendered from — the model, the date, the project's AGENTS.md — although
// a session reuses the prompt it rendered last while none of them changed.

package session

import (
	"context"
	"iter"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/agent/llm/scripted"
	"github.com/dshd/dshd/internal/testkit"
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

// An AGENTS.md over the session's bound is cut: the model gets its start,
// the cut is logged and told to the user once per version, naming the
// setting; a shorter version is told nothing, a longer one again.
func TestInstructions_ACutFileIsLoggedAndToldOncePerVersionNamingTheSetting(t *testing.T) {
	cwd := t.TempDir()
	path := filepath.Join(cwd, prompt.ProjectInstructionsFile)
	var logs testkit.SyncBuffer
	s, err := New(t.Context(), Config{ID: "s1", Cwd: cwd, Model: scripted.Default(), Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Instructions: prompt.InstructionsLimits{MaxBytes: 100, Settings: prompt.InstructionsSettings{MaxBytes: "--max-instructions-bytes"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	testkit.Write(t, cwd, prompt.ProjectInstructionsFile, strings.Repeat("r", 100)+"TAIL")
	want := InstructionsWarning{Title: path + " is cut", Detail: "it is 104 bytes, over --max-instructions-bytes (100); the model is given its first 100 bytes and told the rest is in the file"}
	if w, ok := s.InstructionsWarning(); !ok || w != want {
		t.Fatalf("the user is told %+v, %v; want %+v", w, ok, want)
	}
	if got := s.ProjectInstructions(); !strings.Contains(got, strings.Repeat("r", 100)) || strings.Contains(got, "TAIL") {
		t.Fatalf("the section is %q", got)
	}
	if w, ok := s.InstructionsWarning(); ok {
		t.Fatalf("the same file was told again: %+v", w)
	}
	if n := strings.Count(logs.String(), "project instructions cut"); n != 1 || !strings.Contains(logs.String(), "setting=--max-instructions-bytes") {
		t.Fatalf("logged %d times, want once naming the setting:\n%s", n, logs.String())
	}
	testkit.Write(t, cwd, prompt.ProjectInstructionsFile, "short")
	if w, ok := s.InstructionsWarning(); ok {
		t.Fatalf("a file within the bound was told: %+v", w)
	}
	testkit.Write(t, cwd, prompt.ProjectInstructionsFile, strings.Repeat("r", 100)+"LONGER TAIL")
	if w, ok := s.InstructionsWarning(); !ok || w.Title != want.Title || !strings.Contains(w.Detail, "it is 111 bytes") {
		t.Fatalf("a new version over the bound is told %+v, %v", w, ok)
	}
}

// A session whose system prompt is its own holds no AGENTS.md, and its
// user is told nothing of one.
func TestInstructions_ASessionWithItsOwnSystemPromptIsToldNothing(t *testing.T) {
	cwd := t.TempDir()
	testkit.Write(t, cwd, prompt.ProjectInstructionsFile, strings.Repeat("r", 100)+"TAIL")
	s, err := New(t.Context(), Config{ID: "s1", Cwd: cwd, Model: scripted.Default(), System: func(context.Context) (string, error) { return "own", nil },
		Instructions: prompt.InstructionsLimits{MaxBytes: 10}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if w, ok := s.InstructionsWarning(); ok {
		t.Fatalf("told %+v", w)
	}
}
