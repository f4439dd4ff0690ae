//go:build unix

package acpprovider_test

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dshd/dshd/internal/testkit"
	"github.com/dshd/dshd/subagents"
	acpprovider "github.com/dshd/dshd/subagents/acp"
)

// pidFrom reads "pid=N" from a progress text.
func pidFrom(t testing.TB, text string) int {
	t.Helper()
	_, after, ok := strings.Cut(text, "pid=")
	if !ok {
		t.Fatalf("no pid in %q", text)
	}
	pid, err := strconv.Atoi(strings.Fields(after)[0])
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func TestCancel_StopsTheChildDshdAndLeavesNoProcess(t *testing.T) {
	p := newProvider(t, nil)
	run, progress := startWatched(t, p, dshdBinding(t, "echo.json"), "hang until told")
	progress.waitText(t, "Working on it.")
	run.Cancel()
	res := wait(t, run)
	if res.StopReason != subagents.StopAborted || res.Diagnostic != "" {
		t.Fatalf("result = %+v", res)
	}
	if res.Output != "Working on it." {
		t.Fatalf("output = %q", res.Output)
	}
	run.Dispose()
	checkNoProcesses(t)
}

func TestCrash_AChildKilledMidTurnEndsWithErrorAndItsStderr(t *testing.T) {
	p := newProvider(t, nil)
	run, progress := startWatched(t, p, fakeBinding(modeAgent), "stderr kaboom-1234")
	pid := pidFrom(t, progress.waitText(t, "pid="))
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	res := wait(t, run)
	t.Logf("diagnostic: %s", res.Diagnostic)
	wantError(t, res, "killed by signal SIGKILL", "something went wrong: kaboom-1234")
	run.Dispose()
	checkNoProcesses(t, pid)
}

func TestCrash_AChildDshdKilledMidTurnEndsWithError(t *testing.T) {
	p := newProvider(t, nil)
	run, progress := startWatched(t, p, dshdBinding(t, "echo.json"), "hang")
	progress.waitText(t, "Working on it.")
	var pid int
	for _, pr := range testkit.Descendants(t, os.Getpid()) {
		if pr.Comm == "dshd" {
			pid = pr.PID
		}
	}
	if pid == 0 {
		t.Fatal("no child dshd found")
	}
	syscall.Kill(pid, syscall.SIGKILL)
	res := wait(t, run)
	wantError(t, res, "killed by signal SIGKILL")
	run.Dispose()
	checkNoProcesses(t)
}

func TestCrash_AChildThatExitsMidTurnKeepsItsPartialOutput(t *testing.T) {
	p := newProvider(t, nil)
	parent := newParent(t, parentOpts{})
	run := start(t, p, subagents.StartRequest{Prompt: "exit 3", Parent: parent.Scope, Options: fakeBinding(modeAgent)})
	res := wait(t, run)
	wantError(t, res, "exited with status 3", "dying now")
	if res.Output != "partial answer" {
		t.Fatalf("result = %+v", res)
	}
	run.Dispose()
	checkNoProcesses(t)
}

func TestGarbage_AChildPrintingGarbageOnStdoutEndsWithError(t *testing.T) {
	p := newProvider(t, nil)
	parent := newParent(t, parentOpts{})
	t.Run("mid-turn", func(t *testing.T) {
		run := start(t, p, subagents.StartRequest{Prompt: "garbage", Parent: parent.Scope, Options: fakeBinding(modeAgent)})
		res := wait(t, run)
		wantError(t, res, "not ACP", "panic: this is not JSON")
		run.Dispose()
	})
	t.Run("a banner before initialize fails the run before it starts", func(t *testing.T) {
		run := start(t, p, subagents.StartRequest{Prompt: "echo hi", Parent: parent.Scope, Options: fakeBinding(modeBanner)})
		res := wait(t, run)
		wantError(t, res, "Welcome to the fake agent")
	})
	checkNoProcesses(t)
}

func TestTimeouts_EndTheRunWithAnError(t *testing.T) {
	p := newProvider(t, nil)
	parent := newParent(t, parentOpts{})
	cases := []struct {
		name, mode, option, value, prompt, want string
	}{
		{"StartTimeout_AChildThatNeverAnswersInitialize", modeNoInit, "start-timeout", "300ms", "echo hi", "did not answer initialize within 300ms"},
		// One ignores the cancel sent when time runs out; one answers it.
		{"Timeout_AHungChildEndsWithError_hangforever", modeAgent, "timeout", "0.3", "hangforever", "timed out after 300ms"},
		{"Timeout_AHungChildEndsWithError_hang", modeAgent, "timeout", "0.3", "hang", "timed out after 300ms"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := fakeBinding(tc.mode)
			opts[tc.option] = tc.value
			run := start(t, p, subagents.StartRequest{Prompt: tc.prompt, Parent: parent.Scope, Options: opts})
			wantError(t, wait(t, run), tc.want)
			run.Dispose()
		})
	}
	checkNoProcesses(t)
}

func TestDispose_KillsTheWholeGroupOfAStubbornChild(t *testing.T) {
	p := newProvider(t, &acpprovider.Options{EOFGrace: 100 * time.Millisecond, TermGrace: 100 * time.Millisecond})
	run, progress := startWatched(t, p, fakeBinding(modeStubborn), "pid")
	pid := pidFrom(t, progress.waitText(t, "pid="))
	if n := len(inGroup(t, pid)); n < 2 {
		t.Fatalf("the fake agent's group has %d processes, want it and its helper", n)
	}
	run.Cancel()
	if res := wait(t, run); res.StopReason != subagents.StopAborted {
		t.Fatalf("result = %+v", res)
	}
	run.Dispose()
	checkNoProcesses(t, pid)
}
