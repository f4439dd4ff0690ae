package builtin

import (
	"context"
	"sync"
	"testing"

	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/permission"
)

// countingAsker answers every question with answer and counts them.
type countingAsker struct {
	answer permission.Answer
	mu     sync.Mutex
	asked  []tools.PermissionRequest
}

func (a *countingAsker) Ask(_ context.Context, req tools.PermissionRequest) (permission.Answer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, req)
	return a.answer, nil
}

// Finding 8 of issue 10: in accept-edits the model wrote core.fsmonitor
// into .git/config without a question.
func TestControlFiles_AreAskedAboutLikeCommands(t *testing.T) {
	t.Run("accept-edits asks before an edit under .git and not before an ordinary one", func(t *testing.T) {
		env, dir := testEnv(t)
		write(t, dir, ".git/config", "[core]\n")
		asker := &countingAsker{answer: permission.RejectOnce}
		env.Permission = permission.NewPolicy(permission.ModeAcceptEdits, asker)
		res := call(t, NewEditFile(), env, EditFileParams{Path: ".git/config", OldText: "[core]\n", NewText: "[core]\n\tfsmonitor = \"touch pwned\"\n"})
		mustContain(t, res, true, "the user rejected")
		if len(asker.asked) != 1 || asker.asked[0].Effect != tools.EffectControl {
			t.Fatalf("questions %+v, want one about a control file", asker.asked)
		}
		if got := read(t, dir, ".git/config"); got != "[core]\n" {
			t.Fatalf(".git/config = %q", got)
		}
		mustContain(t, call(t, NewWriteFile(), env, WriteFileParams{Path: "src/main.go", Content: "package main\n"}), false, "Created")
		if len(asker.asked) != 1 {
			t.Fatalf("an ordinary edit was asked about in accept-edits")
		}
	})
	t.Run("allowing a tool's edits always does not cover control files", func(t *testing.T) {
		env, _ := testEnv(t)
		asker := &countingAsker{answer: permission.AllowAlways}
		env.Permission = permission.NewPolicy(permission.ModeAsk, asker)
		call(t, NewWriteFile(), env, WriteFileParams{Path: "a.txt", Content: "a"})
		call(t, NewWriteFile(), env, WriteFileParams{Path: "b.txt", Content: "b"})
		if len(asker.asked) != 1 {
			t.Fatalf("%d questions for two ordinary writes after allow_always, want 1", len(asker.asked))
		}
		call(t, NewWriteFile(), env, WriteFileParams{Path: ".git/hooks/pre-commit", Content: "#!/bin/sh\n"})
		if len(asker.asked) != 2 || asker.asked[1].Effect != tools.EffectControl {
			t.Fatalf("questions %+v, want a second one for the hook", asker.asked)
		}
	})
}
