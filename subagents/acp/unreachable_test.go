//go:build unix

package acpprovider_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dshd/dshd/subagents"
)

// An agent that cannot be reached is named once in what the model is told:
// its address, then why (the refusal or the dial error names it already).
func TestAnAgentThatCannotBeReachedIsNamedOnceWithTheReason(t *testing.T) {
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "bad token", http.StatusForbidden)
	}))
	t.Cleanup(refuse.Close)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := closed.Addr().String()
	closed.Close()
	for _, c := range []struct {
		name, address, because string
	}{
		{"refused", "ws" + strings.TrimPrefix(refuse.URL, "http") + "/acp", "answered 403"},
		{"nobody listening", "ws://" + gone + "/acp", "connection refused"},
		{"no socket", "unix:" + t.TempDir() + "/agent.sock", "no such file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := newProvider(t, nil)
			parent := newParent(t, parentOpts{})
			run, err := p.Start(t.Context(), subagents.StartRequest{Prompt: "p", Parent: parent.Scope, Options: map[string]string{"address": c.address}})
			if err != nil {
				t.Fatalf("Start = %v, want a run that settled with an error", err)
			}
			res := wait(t, run)
			wantError(t, res, "could not be started", c.because)
			where := strings.TrimPrefix(c.address, "unix:")
			if n := strings.Count(res.Diagnostic, where); n != 1 {
				t.Errorf("the diagnostic names %s %d times, want once:\n%s", where, n, res.Diagnostic)
			}
			run.Dispose()
		})
	}
}
