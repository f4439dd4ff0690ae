package builtin

import (
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

func TestRunCommandBackground_HasNoTimeoutKeepsTheSetsOutputAndShowsTheEditorsTerminal(t *testing.T) {
	env, _ := testEnv(t)
	zero := 0
	runner := &terminalRunner{result: tools.CommandResult{Output: "ok\n", ExitCode: &zero}}
	env.Runner = runner
	tool, set := bound(t, &RunCommandOptions{DefaultTimeout: 100 * time.Millisecond})
	res := call(t, tool, env, RunCommandParams{Command: "make serve", Background: true})
	limit, setting := set.OutputLimit()
	if c := runner.cmds[0]; c.Timeout != 0 || c.OutputLimit != limit || c.OutputLimitSetting != setting {
		t.Errorf("command = %+v, want no timeout and the task's output limit %d, named %s", c, limit, setting)
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
