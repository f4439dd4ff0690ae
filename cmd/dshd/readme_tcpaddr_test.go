// End-to-end test of `dshd serve --listen tcp:HOST:PORT` with port 0,
// which README's configuration table accepts ("port 0–65535"): the
// "dshd listening" line must say the address bound, or nobody can reach
// the daemon.

package main

import (
	"regexp"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

func TestATCPListenerOnPort0LogsThePortItBound(t *testing.T) {
	p := start(t, opts{env: []string{"DSHD_TOKEN=" + daemonToken}}, "serve", "--listen", "tcp::0", "--model", "scripted", "--state-dir", t.TempDir())
	line, err := p.stderr.waitFor(testkit.Context(t), "dshd listening")
	if err != nil {
		t.Fatalf("%v; stderr:\n%s", err, p.stderr)
	}
	m := regexp.MustCompile(`addr=tcp:(127\.0\.0\.1:[1-9][0-9]*)`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("the listening line does not say the address bound: %q", line)
	}
	c := dialWire(t, "tcp", m[1])
	ctx := testkit.Context(t)
	authenticate(ctx, c, daemonToken)
	c.endTurn(ctx, c.newSession(ctx, t.TempDir()), "hi")
}
