//go:build unix

package acpprovider_test

import (
	"context"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	acpprovider "github.com/dshd/dshd/subagents/acp"

	"github.com/dshd/dshd/subagents"
)

// fleetMember is a dshd on an http listener with a state dir the test
// reads.
type fleetMember struct {
	*daemon
	state string
}

func startMember(t *testing.T, script, listen string) *fleetMember {
	t.Helper()
	state := t.TempDir()
	cmd := exec.Command(dshdBin, "serve", "--model", "scripted:"+script, "--state-dir", state, "--mode", "yolo", "--listen", listen)
	d := startDaemon(t, cmd, (*exec.Cmd).StderrPipe, listenedAddr)
	return &fleetMember{daemon: d, state: state}
}

// sessions counts the session journals the member has written.
func (m *fleetMember) sessions(t *testing.T) int {
	t.Helper()
	n := 0
	filepath.WalkDir(m.state, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".jsonl") {
			n++
		}
		return nil
	})
	return n
}

// gateScript is a script whose "gated" task waits for a file before it
// answers "through the gate".
func gateScript(t *testing.T) (script, gate string) {
	dir := t.TempDir()
	gate = filepath.Join(dir, "gate")
	script = filepath.Join(dir, "gate.json")
	os.WriteFile(script, []byte(`{"rules":[
	 {"user":"^gated","step":0,"text":"waiting at the gate","toolCalls":[{"name":"run_command","arguments":{"command":"while [ ! -e `+gate+` ]; do sleep 0.02; done"}}]},
	 {"user":"^gated","step":1,"text":"through the gate"},
	 {"text":"You said: {{user}}"}]}`), 0o600)
	return script, gate
}

// startGated starts n gated runs and waits until each is at the gate.
func startGated(t *testing.T, p *acpprovider.Provider, parent interface{ Scope() *subagents.Scope }, n int, opts map[string]string) []subagents.Run {
	t.Helper()
	var runs []subagents.Run
	for i := range n {
		progress := newProgressLog()
		r := start(t, p, subagents.StartRequest{Prompt: "gated task " + string(rune('a'+i)), Parent: parent.Scope(), Options: opts, Progress: progress.report})
		t.Cleanup(func() { r.Dispose() })
		progress.waitText(t, "waiting at the gate")
		runs = append(runs, r)
	}
	return runs
}

type scoped struct{ s *subagents.Scope }

func (s scoped) Scope() *subagents.Scope { return s.s }

func TestFleet_RunsGoToTheLeastLoadedEndpointSkipAFailedOneAndSurviveAKill(t *testing.T) {
	script, gate := gateScript(t)
	a := startMember(t, script, "http://127.0.0.1:0")
	b := startMember(t, script, "http://127.0.0.1:0")
	p := newProvider(t, nil)
	parent := newParent(t, parentOpts{})
	opts := map[string]string{"address": wsOf(a.addr) + " " + wsOf(b.addr)}

	runs := startGated(t, p, scoped{parent.Scope}, 4, opts)
	if na, nb := a.sessions(t), b.sessions(t); na != 2 || nb != 2 {
		t.Fatalf("sessions placed %d and %d, want 2 and 2 (least loaded)", na, nb)
	}
	// One member dies with two runs on it; they go on on the other.
	a.kill()
	os.WriteFile(gate, nil, 0o600)
	var wg sync.WaitGroup
	results := make([]subagents.Result, len(runs))
	for i, r := range runs {
		wg.Go(func() { results[i] = wait(t, r) })
	}
	wg.Wait()
	for i, res := range results {
		if res.StopReason != subagents.StopCompleted || res.Output != "through the gate" {
			t.Fatalf("run %d: %+v", i, res)
		}
	}
	if nb := b.sessions(t); nb != 4 {
		t.Fatalf("the surviving member has %d sessions, want 4 (its 2 and the 2 moved)", nb)
	}
	// The dead member is skipped.
	if res := ask(t, p, parent, "after the kill", opts); res.StopReason != subagents.StopCompleted || res.Output != "You said: after the kill" {
		t.Fatalf("a run after the kill: %+v", res)
	}
}

func TestFleet_ANameThatResolvesToSeveralAddressesIsAFleet(t *testing.T) {
	script, _ := gateScript(t)
	a := startMember(t, script, "http://127.0.0.2:0")
	u, _ := url.Parse(a.addr)
	b := startMember(t, script, "http://127.0.0.3:"+u.Port())
	p := newProvider(t, &acpprovider.Options{LookupHost: func(ctx context.Context, host string) ([]string, error) {
		if host != "dshd.fleet.test" {
			t.Errorf("looked up %q", host)
		}
		return []string{"127.0.0.3", "127.0.0.2"}, nil
	}})
	parent := newParent(t, parentOpts{})
	opts := map[string]string{"address": "ws://dshd.fleet.test:" + u.Port() + "/acp"}
	startGated(t, p, scoped{parent.Scope}, 2, opts)
	if na, nb := a.sessions(t), b.sessions(t); na != 1 || nb != 1 {
		t.Fatalf("sessions placed %d and %d, want 1 and 1", na, nb)
	}
}
