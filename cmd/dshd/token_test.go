// End-to-end tests of where the daemon token applies (issue 10): a stdio
// peer is the process that started dshd and needs no token, whatever the
// environment says; a socket listener with a token still asks for it.

package main

import (
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

func TestToken_OnStdioDSHD_TOKENIsIgnoredAndSessionsNeedNoAuthenticate(t *testing.T) {
	ctx := testkit.Context(t)
	p := start(t, opts{env: []string{"DSHD_TOKEN=" + daemonToken}}, "serve", "--model", "scripted", "--state-dir", t.TempDir(), "--log-level", "debug")
	c := stdioWire(p)
	init := c.initialize(ctx, nil)
	for _, m := range init.AuthMethods {
		if m.ID == "token" {
			t.Errorf("a stdio daemon offers the token method: %+v", m)
		}
	}
	sid := c.newSession(ctx, t.TempDir())
	c.endTurn(ctx, sid, "no token needed")
	// logout is a token daemon's method: on stdio there is nothing to log
	// out of, and a client that tries is not locked out by it.
	if e := c.callFail(ctx, "logout", map[string]any{}); e.Code != -32601 {
		t.Errorf("logout on stdio: %v, want -32601", e)
	}
	c.newSession(ctx, t.TempDir())
	if _, err := p.stderr.waitFor(ctx, "DSHD_TOKEN", "ignored", "stdio"); err != nil {
		t.Errorf("the ignored token is not logged at debug: %v\n%s", err, p.stderr)
	}
	if code := p.hangUp(ctx); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr)
	}
}

func TestToken_AUnixListenerWithDSHD_TOKENRefusesAnUnauthenticatedSession(t *testing.T) {
	ctx := testkit.Context(t)
	path := socketPath(t)
	p := serveIn(t, opts{env: []string{"DSHD_TOKEN=" + daemonToken}}, "unix:"+path, t.TempDir())
	c := dialWire(t, "unix", path)
	c.initialize(ctx, nil)
	if e := c.callFail(ctx, "session/new", newParams(t.TempDir())); e.Code != -32000 {
		t.Errorf("session/new before authenticate: %v, want -32000", e)
	}
	c.call(ctx, "authenticate", tokenParams(daemonToken), nil)
	c.newSession(ctx, t.TempDir())
	c.closer.Close()
	p.stop(t)
}
