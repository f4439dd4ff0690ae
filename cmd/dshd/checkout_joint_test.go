//go:build unix

// End-to-end test of checkouts cloned at once on several connections:
// --max-state-bytes bounds them together, not each alone.

package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

// stateBytes is what the regular files under dir hold.
func stateBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		fi, err := d.Info()
		total += fi.Size()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return total
}

func TestClonesOnSeveralConnectionsHoldMaxStateBytesTogether(t *testing.T) {
	ctx := testkit.Context(t)
	state := t.TempDir()
	// Each clone writes 40 KiB (random, so nothing packs it smaller) and
	// then waits at the gate: one fits under the 64 KiB bound, two do
	// not, and none ends on its own, so only the bound can stop them.
	gate := testkit.FIFO(t, t.TempDir(), "gate")
	env := fakeGit(t, `for a; do last=$a; done; mkdir -p "$last" && head -c 40960 /dev/urandom > "$last/pack" && read x < `+gate)
	sock := socketPath(t)
	p := serveIn(t, opts{env: []string{env}}, "unix:"+sock, state, "--max-state-bytes", "65536", "--checkout-timeout", "1h")
	answers := make(chan *msg, 3)
	for range 3 {
		c := dialWire(t, "unix", sock)
		c.initialize(ctx, nil)
		ch, err := c.start("session/new", checkoutParams("https://git.example/big.git"))
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			select {
			case m := <-ch:
				answers <- m
			case <-ctx.Done():
			}
		}()
	}
	// Two of the three are stopped, whichever clone passed the bound
	// with the others, and say so naming the setting.
	for range 2 {
		select {
		case m := <-answers:
			if m.Error == nil {
				t.Fatalf("a second checkout was made while a third clone ran, %d bytes on disk under a bound of 65536: %s", stateBytes(t, filepath.Join(state, "sessions")), m.Result)
			}
			var data struct {
				Reason string `json:"reason"`
			}
			_ = json.Unmarshal(m.Error.Data, &data)
			if said := m.Error.Message + "\n" + data.Reason; !containsAll(said, "The session was not created", "--max-state-bytes (65536)") {
				t.Fatalf("a clone stopped by the bound answered %v", m.Error)
			}
		case <-ctx.Done():
			left, _ := filepath.Glob(filepath.Join(state, "sessions", "workspaces", "*"))
			t.Fatalf("%d clones still run, together %d bytes on disk under a bound of 65536: each was held against it alone; stderr:\n%s", len(left), stateBytes(t, filepath.Join(state, "sessions")), p.stderr)
		}
	}
	// The one left is made once its git ends, and with it the sessions
	// hold less than the bound.
	if err := os.WriteFile(gate, []byte("go\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var m *msg
	select {
	case m = <-answers:
	case <-ctx.Done():
		t.Fatal("the clone under the bound was not answered once its git ended")
	}
	var res newResult
	if m.Error != nil || json.Unmarshal(m.Result, &res) != nil {
		t.Fatalf("the clone under the bound answered %v %s", m.Error, m.Result)
	}
	left, err := filepath.Glob(filepath.Join(state, "sessions", "workspaces", "*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || filepath.Base(left[0]) != res.SessionID {
		t.Fatalf("checkouts on disk %q, want only the session's %s", left, res.SessionID)
	}
	if n := stateBytes(t, filepath.Join(state, "sessions")); n >= 65536 {
		t.Fatalf("the sessions hold %d bytes, at or above --max-state-bytes (65536)", n)
	}
	if n := strings.Count(p.stderr.String(), "--max-state-bytes"); n != 1 {
		t.Fatalf("two clones stopped by the bound were logged %d times naming it, want once; stderr:\n%s", n, p.stderr)
	}
}
