// End-to-end test of a full disk: a dshd whose state directory is a small
// tmpfs answers end_turn only for turns it saved, tells the client when a
// turn was not saved, refuses prompts while it cannot save, and once space
// returns loads with every acknowledged turn.

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

// smallTmpfs mounts a tmpfs of size (mount's syntax) on a temp dir and
// unmounts it at the end of the test. It skips the test where it cannot:
// mounting needs root (CI runs as root).
func smallTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("filling a disk needs a small tmpfs, and mounting one needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs to fill (%v: %s)", err, strings.TrimSpace(string(out)))
	}
	// Registered after TempDir's cleanup, so it runs before it.
	t.Cleanup(func() {
		out, err := exec.Command("umount", dir).CombinedOutput()
		if err != nil && strings.Contains(string(out), "busy") {
			// A process of the test (dshd, or a helper it started) may
			// still hold the mount for a moment after it was killed: a
			// lazy unmount detaches it now and frees it when they are gone.
			out, err = exec.Command("umount", "-l", dir).CombinedOutput()
		}
		if err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

func TestAFullDiskNeverLosesAnAcknowledgedTurn(t *testing.T) {
	disk := smallTmpfs(t, "256k")
	// The filler is the space that returns later.
	filler := filepath.Join(disk, "filler")
	if err := os.WriteFile(filler, make([]byte, 64<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(disk, "sessions")
	ctx := testkit.Context(t)
	cwd := t.TempDir()
	// The free-space bound is off: this is what slips past it (another
	// process filling the disk during a turn).
	p := start(t, opts{}, "--model", "scripted", "--state-dir", state, "--min-free-disk-bytes", "0")
	c := stdioWire(p)
	sid := c.openSession(ctx, cwd)

	pad := strings.Repeat("x", 200)
	var acked []string
	var failed *rpcErr
	for i := 0; i < 1000 && failed == nil; i++ {
		tag := fmt.Sprintf("turn %d:", i)
		raw, err := c.callErr(ctx, "session/prompt", promptParams(sid, tag+pad))
		switch e := err.(type) {
		case nil:
			if !strings.Contains(string(raw), `"end_turn"`) {
				t.Fatalf("%s answered %s", tag, raw)
			}
			acked = append(acked, tag)
		case *rpcErr:
			failed = e
		default:
			t.Fatalf("%s: %v; stderr:\n%s", tag, err, p.stderr)
		}
	}
	if failed == nil {
		t.Fatal("1,000 turns on a 256 KiB disk all answered end_turn: a full disk goes unnoticed")
	}
	if !containsAll(failed.Message, "not saved", "no space left on device") {
		t.Fatalf("the turn that filled the disk answered %v", failed)
	}
	if e := c.callFail(ctx, "session/prompt", promptParams(sid, "while the disk is full")); !containsAll(e.Message, "not run", "no space left on device") {
		t.Fatalf("a prompt while the disk is full answered %v", e)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if got := c.prompt(ctx, sid, "after space returned"); got != "end_turn" {
		t.Fatalf("once space returned the prompt answered %q", got)
	}
	acked = append(acked, "after space returned")
	c.closer.Close()
	if code := p.wait(ctx); code != 0 {
		t.Fatalf("dshd exited %d; stderr:\n%s", code, p.stderr)
	}

	// A fresh daemon loads every acknowledged turn.
	loadInFreshDaemon(ctx, t, sid, cwd, acked, "--model", "scripted", "--state-dir", state, "--min-free-disk-bytes", "0")
	t.Logf("%d turns acknowledged before the disk filled; all load", len(acked)-1)
}
