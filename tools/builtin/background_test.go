package builtin

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/tasks"
)

// bound is run_command bound to a fresh set of tasks, closed with the
// test.
func bound(t *testing.T, opts *RunCommandOptions) (tools.Tool, *tasks.Set) {
	t.Helper()
	set := tasks.New(tasks.Options{OutputLimit: 4096})
	t.Cleanup(func() { set.Close(tasks.StateCancelled) })
	return NewRunCommand(opts).(tasks.Binder).BindTasks(set), set
}

func TestRunCommandBackground_ReturnsTheFirstOutputAndOutlivesTheTurnUntilTheTaskIsCancelled(t *testing.T) {
	env, dir := testEnv(t)
	tool, set := bound(t, nil)
	pidFile := filepath.Join(dir, "pid")
	turn, endTurn := context.WithCancel(t.Context())
	res, err := callCtx(turn, t, tool, env, RunCommandParams{
		Command:    "echo $$ > " + pidFile + "; echo first; exec sleep 300",
		Background: true,
	}, tools.Discard)
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, res, false, "Started background task t1", "first", "It keeps running")
	if raw := res.RawOutput.(map[string]any); raw["task"] != "t1" || raw["state"] != tasks.StateRunning {
		t.Fatalf("rawOutput = %+v", raw)
	}
	endTurn() // the turn that started it ends, or is cancelled
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if in, _ := set.Get("t1"); in.State != tasks.StateRunning || syscall.Kill(pid, 0) != nil {
		t.Fatalf("after its turn the task is %s", in.State)
	}
	in, err := set.Cancel(t.Context(), "t1")
	if err != nil || in.State != tasks.StateCancelled {
		t.Fatalf("cancel = %+v, %v", in, err)
	}
	if syscall.Kill(pid, 0) == nil {
		t.Errorf("the command's process %d outlived the task's cancel", pid)
	}
}

func TestRunCommandBackground_HasNoTimeoutKeepsTheSetsOutputAndShowsTheEditorsTerminal(t *testing.T) {
	env, _ := testEnv(t)
	zero := 0
	runner := &terminalRunner{result: tools.CommandResult{Output: "ok\n", ExitCode: &zero}}
	env.Runner = runner
	tool, set := bound(t, &RunCommandOptions{DefaultTimeout: 100 * time.Millisecond})
	res := call(t, tool, env, RunCommandParams{Command: "make serve", Background: true})
	if c := runner.cmds[0]; c.Timeout != 0 || c.OutputLimit != set.OutputLimit() {
		t.Errorf("command = %+v, want no timeout and the task's output limit %d", c, set.OutputLimit())
	}
	if len(res.Content) != 1 || res.Content[0].Type != tools.ContentTerminal || res.Content[0].TerminalID != "term-7" {
		t.Errorf("content = %+v, want the editor's terminal", res.Content)
	}
	t.Run("a timeout the call gives holds", func(t *testing.T) {
		call(t, tool, env, RunCommandParams{Command: "make serve", Background: true, Timeout: 5})
		if c := runner.cmds[1]; c.Timeout != 5*time.Second {
			t.Errorf("timeout = %v", c.Timeout)
		}
	})
	t.Run("outside a session it is an error, and nothing runs", func(t *testing.T) {
		mustContain(t, call(t, NewRunCommand(nil), env, RunCommandParams{Command: "make serve", Background: true}), true, "cannot run commands in the background")
		if len(runner.cmds) != 2 {
			t.Errorf("%d commands ran", len(runner.cmds))
		}
	})
}
