//go:build unix

package builtin

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/tasks"
)

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
