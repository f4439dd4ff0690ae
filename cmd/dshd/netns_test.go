//go:build linux

// Several hosts on one machine: a parent dshd in one network namespace
// delegates over ws:// to dshd daemons in two others, joined to it by veth
// pairs and to nothing else. Needs root and iproute2; skipped otherwise.

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

// netns is one network namespace the test made.
type netns struct{ name string }

func (n netns) run(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("ip", append([]string{"-n", n.name}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("ip -n %s %v: %v: %s", n.name, args, err, out)
	}
	return string(out)
}

// hosts makes a parent namespace and two children, each child joined to
// the parent by its own veth pair on 10.231.N.0/24 (parent .1, child .2),
// with no other interface than lo and no route beyond those links.
func hosts(t *testing.T) (parent netns, children []netns) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("iproute2's ip is not installed")
	}
	tag := fmt.Sprintf("dshd%d", os.Getpid()%100000)
	mk := func(name string) netns {
		if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
			t.Skipf("cannot make a network namespace here: %v: %s", err, out)
		}
		t.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
		n := netns{name}
		n.run(t, "link", "set", "lo", "up")
		return n
	}
	parent = mk(tag + "p")
	for i := 1; i <= 2; i++ {
		c := mk(fmt.Sprintf("%sc%d", tag, i))
		pv, cv := fmt.Sprintf("%sp%d", tag, i), fmt.Sprintf("%sc%d", tag, i)
		if out, err := exec.Command("ip", "link", "add", pv, "netns", parent.name, "type", "veth", "peer", "name", cv, "netns", c.name).CombinedOutput(); err != nil {
			t.Skipf("cannot make a veth pair here: %v: %s", err, out)
		}
		parent.run(t, "addr", "add", fmt.Sprintf("10.231.%d.1/24", i), "dev", pv)
		parent.run(t, "link", "set", pv, "up")
		c.run(t, "addr", "add", fmt.Sprintf("10.231.%d.2/24", i), "dev", cv)
		c.run(t, "link", "set", cv, "up")
		children = append(children, c)
	}
	return parent, children
}

// startIn runs the test binary as dshd inside a namespace.
func startIn(t *testing.T, ns netns, env []string, args ...string) *proc {
	t.Helper()
	return start(t, opts{env: env, prefix: []string{"ip", "netns", "exec", ns.name}}, args...)
}

func TestNetns_AParentDelegatesToDaemonsOnTwoOtherHostsAndSurvivesLosingOne(t *testing.T) {
	parentNS, childNS := hosts(t)
	const token = "netns-fleet-token-0123456789"
	gate := filepath.Join(t.TempDir(), "gate")
	child := writeScript(t, `{"rules":[
	 {"user":"gated","step":0,"text":"waiting at the gate","toolCalls":[{"name":"run_command","arguments":{"command":"while [ ! -e `+gate+` ]; do sleep 0.02; done"}}]},
	 {"user":"gated","step":1,"text":"through the gate: {{user}}"}]}`)
	var daemons []*proc
	var urls []string
	for i, ns := range childNS {
		d := startIn(t, ns, []string{"DSHD_TOKEN=" + token}, "serve", "--listen", "http://0.0.0.0:8080", "--model", "scripted:"+child, "--state-dir", t.TempDir(), "--mode", "yolo")
		if _, err := d.stderr.waitFor(testkit.Context(t), "dshd listening"); err != nil {
			t.Fatalf("%v; stderr:\n%s", err, d.stderr)
		}
		daemons = append(daemons, d)
		urls = append(urls, fmt.Sprintf("ws://10.231.%d.2:8080/acp", i+1))
	}
	// Nothing leaves the three namespaces: each has lo and its veths,
	// and routes only to those links.
	for _, ns := range append([]netns{parentNS}, childNS...) {
		routes := ns.run(t, "route", "show")
		if strings.Contains(routes, "default") || strings.Count(strings.TrimSpace(routes), "\n")+1 > 2 {
			t.Fatalf("%s routes beyond its links:\n%s", ns.name, routes)
		}
		for _, m := range regexp.MustCompile(`(?m)^\d+: ([^:@]+)`).FindAllStringSubmatch(ns.run(t, "link", "show"), -1) {
			if m[1] != "lo" && !strings.HasPrefix(m[1], "dshd") {
				t.Fatalf("%s has an interface %s", ns.name, m[1])
			}
		}
	}

	parentScript := writeScript(t, `{"rules":[
	 {"user":"^fan out","step":0,"text":"delegating","toolCalls":[
	   {"name":"remote","arguments":{"description":"one","prompt":"gated task one"}},
	   {"name":"remote","arguments":{"description":"two","prompt":"gated task two"}}]},
	 {"user":"^fan out","step":1,"text":"children said: {{tool}}"}]}`)
	p := startIn(t, parentNS, []string{"FLEET_TOKEN=" + token}, "serve", "--model", "scripted:"+parentScript, "--state-dir", t.TempDir(), "--mode", "yolo",
		"--subagent", "remote=acp,address="+strings.Join(urls, " ")+",token-env=FLEET_TOKEN")
	ctx := testkit.Context(t)
	w := stdioWire(p)
	sid := w.openSession(ctx, t.TempDir())
	done := w.promptAsync(sid, "fan out")
	// Both children reach the gate, one on each host; then one host dies.
	w.waitUpdates(ctx, sid, func(ns []note) bool {
		n := 0
		for _, u := range ns {
			if strings.Contains(string(u.Update), "waiting at the gate") {
				n++
			}
		}
		return n >= 2
	})
	daemons[0].signal(syscall.SIGKILL)
	daemons[0].wait(ctx)
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if stop := stopReason(ctx, t, done); stop != "end_turn" {
		t.Fatalf("stop %q; parent stderr:\n%s", stop, p.stderr)
	}
	// Both tool calls completed with their child's answer.
	results := ""
	completed := 0
	for _, u := range w.updates(sid) {
		var c struct {
			Status  string          `json:"status"`
			Content json.RawMessage `json:"content"`
		}
		if u.Kind == "tool_call_update" && json.Unmarshal(u.Update, &c) == nil && c.Status == "completed" {
			completed++
			results += string(c.Content)
		}
	}
	for _, want := range []string{"through the gate: gated task one", "through the gate: gated task two"} {
		if completed != 2 || !strings.Contains(results, want) {
			t.Fatalf("%d tool calls completed, results lack %q:\n%s\nparent stderr:\n%s", completed, want, results, p.stderr)
		}
	}
	// One child was on the host that died and went on on the other.
	if !strings.Contains(p.stderr.String(), "from="+urls[0]+" to="+urls[1]) {
		t.Fatalf("no child moved from the dead host; parent stderr:\n%s", p.stderr)
	}
	p.hangUp(ctx)
}
