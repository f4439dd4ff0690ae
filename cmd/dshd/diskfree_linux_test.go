// End-to-end test of --min-free-disk-bytes on a small tmpfs: while its
// free space is below the bound, a real dshd runs no prompt and creates no
// session, and it does both again once space is freed.

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/dshd/dshd/agent/session"
	"github.com/dshd/dshd/internal/testkit"
)

// freeBytes is the space available to us on dir's file system.
func freeBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * st.Frsize
}

func TestMinFreeDiskBytesKeepsPromptsAndNewSessionsOffANearlyFullDisk(t *testing.T) {
	disk := smallTmpfs(t, "4m")
	const bound = 1 << 20
	ctx := testkit.Context(t)
	state, cwd := filepath.Join(disk, "state"), t.TempDir()
	sessions := filepath.Join(state, "sessions")
	p := start(t, opts{}, "--model", "scripted", "--state-dir", state, "--min-free-disk-bytes", fmt.Sprint(bound))
	c := stdioWire(p)
	sid := c.openSession(ctx, cwd)
	c.endTurn(ctx, sid, "while there is room")

	// Fill the disk to half the bound's free space.
	filler := filepath.Join(disk, "filler")
	if err := os.WriteFile(filler, make([]byte, freeBytes(t, disk)-bound/2), 0o600); err != nil {
		t.Fatal(err)
	}
	free := freeBytes(t, disk)
	if free >= bound {
		t.Fatalf("the filler left %d bytes free, not under the bound", free)
	}
	before, n := journalSize(t, state, sid), len(journals(t, state))

	refusal := func(e *rpcErr, what string) {
		t.Helper()
		if !containsAll(e.Message, what, "--min-free-disk-bytes", fmt.Sprint(bound), sessions, "free") {
			t.Fatalf("answered %v, want %q naming the setting, the state directory and its free space", e, what)
		}
		var data struct {
			Setting string `json:"setting"`
			Free    int64  `json:"free"`
		}
		if err := json.Unmarshal(e.Data, &data); err != nil || data.Setting != "--min-free-disk-bytes" || data.Free <= 0 || data.Free >= bound {
			t.Fatalf("the refusal's data is %s, want the setting and the free bytes", e.Data)
		}
	}
	refusal(c.callFail(ctx, "session/prompt", promptParams(sid, "on a nearly full disk")), "The prompt was not run")
	refusal(c.callFail(ctx, "session/prompt", promptParams(sid, "again")), "The prompt was not run")
	refusal(c.callFail(ctx, "session/new", newParams(cwd)), "The session was not created")
	refusal(c.callFail(ctx, "session/fork", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}), "The session was not forked")
	if got := journalSize(t, state, sid); got != before {
		t.Fatalf("the refused prompts changed the journal from %d to %d bytes", before, got)
	}
	if got := len(journals(t, state)); got != n {
		t.Fatalf("the refused session/new and fork left %d journals, there were %d", got, n)
	}
	if got := strings.Count(p.stderr.String(), session.LogFreeBound); got != 1 {
		t.Fatalf("four refusals were logged %d times, want once; stderr:\n%s", got, p.stderr)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	c.endTurn(ctx, sid, "once space was freed")
	fresh := c.newSession(ctx, cwd)
	c.endTurn(ctx, fresh, "a new session once space was freed")
	if !strings.Contains(p.stderr.String(), "free space is back") {
		t.Fatalf("the recovery was not logged; stderr:\n%s", p.stderr)
	}
}
