//go:build linux

// End-to-end test of descriptors: idle sessions do not each hold their
// journal open, so a daemon with few descriptors serves many sessions.

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dshd/dshd/internal/testkit"
)

func TestManySessionsDoNotRunTheDaemonOutOfDescriptors(t *testing.T) {
	const nofile, sessions = 512, 600
	path := socketPath(t)
	p := serveIn(t, opts{}, "unix:"+path, memTempDir(t))
	lim := unix.Rlimit{Cur: nofile, Max: nofile}
	if err := unix.Prlimit(p.cmd.Process.Pid, unix.RLIMIT_NOFILE, &lim, nil); err != nil {
		t.Fatalf("prlimit: %v", err)
	}
	ctx := testkit.Context(t)
	cwd := t.TempDir()
	c := dialWire(t, "unix", path)
	c.initialize(ctx, nil)
	sids := make([]string, sessions)
	for i := range sids {
		raw, err := c.callErr(ctx, "session/new", newParams(cwd))
		if err != nil {
			t.Fatalf("session/new number %d under %d descriptors: %v; stderr:\n%s", i+1, nofile, err, p.stderr)
		}
		var res newResult
		_ = json.Unmarshal(raw, &res)
		sids[i] = res.SessionID
	}
	for _, i := range []int{0, sessions / 2, sessions - 1} {
		if got := c.prompt(ctx, sids[i], fmt.Sprint("prompt ", i)); got != "end_turn" {
			t.Fatalf("prompt on session %d: %q", i, got)
		}
	}
	// Another client is still served.
	other := dialWire(t, "unix", path)
	other.initialize(ctx, nil)
	if got := other.prompt(ctx, other.newSession(ctx, cwd), "still served"); got != "end_turn" {
		t.Fatalf("a second client's prompt: %q", got)
	}
	c.closer.Close()
	other.closer.Close()
	p.stop(t)
}

func TestMaxOpenJournalsBoundsTheJournalFilesTheDaemonHoldsOpen(t *testing.T) {
	const limit, sessions = 3, 12
	path := socketPath(t)
	p := serveIn(t, opts{}, "unix:"+path, memTempDir(t), "--max-open-journals", fmt.Sprint(limit))
	ctx := testkit.Context(t)
	cwd := t.TempDir()
	c := dialWire(t, "unix", path)
	c.initialize(ctx, nil)
	for i := range sessions {
		sid := c.newSession(ctx, cwd)
		if got := c.prompt(ctx, sid, fmt.Sprint("prompt ", i)); got != "end_turn" {
			t.Fatalf("prompt on session %d: %q", i, got)
		}
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", p.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	open := 0
	for _, fd := range fds {
		target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", p.cmd.Process.Pid, fd.Name()))
		if err == nil && strings.HasSuffix(target, ".jsonl") {
			open++
		}
	}
	if open == 0 || open > limit {
		t.Fatalf("the daemon holds %d journal files open after %d sessions, want 1..%d (--max-open-journals)", open, sessions, limit)
	}
	c.closer.Close()
	p.stop(t)
}
