// End-to-end test of the model selector of a new session (issue 11, item
// 15): the model list arrives after session/new answered, and the client
// is told with config_option_update.

package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

// modelOptions returns the values of the "model" config option in a
// configOptions array.
func modelOptions(raw json.RawMessage) []string {
	var opts []struct {
		ID      string `json:"id"`
		Options []struct {
			Value string `json:"value"`
		} `json:"options"`
	}
	_ = json.Unmarshal(raw, &opts)
	var out []string
	for _, o := range opts {
		if o.ID == "model" {
			for _, v := range o.Options {
				out = append(out, v.Value)
			}
		}
	}
	return out
}

func TestTheModelSelectorIsUpdatedWhenTheModelListArrives(t *testing.T) {
	ctx := testkit.Context(t)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/models") {
			http.NotFound(w, r)
			return
		}
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"m"},{"id":"bigger-model"}]}`))
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	p := start(t, opts{}, "--model-url", srv.URL, "--model", "m", "--api-key-env", "", "--state-dir", t.TempDir())
	c := stdioWire(p)
	c.initialize(ctx, nil)
	var res struct {
		SessionID     string          `json:"sessionId"`
		ConfigOptions json.RawMessage `json:"configOptions"`
	}
	c.call(ctx, "session/new", newParams(t.TempDir()), &res)
	if got := modelOptions(res.ConfigOptions); len(got) != 1 || got[0] != "m" {
		t.Fatalf("before the list arrives the selector offers %v, want only the default", got)
	}
	close(release)
	ups := c.waitUpdates(ctx, res.SessionID, func(ns []note) bool { return count(ns, "config_option_update") > 0 })
	for _, n := range ups {
		if n.Kind != "config_option_update" {
			continue
		}
		var u struct {
			ConfigOptions json.RawMessage `json:"configOptions"`
		}
		_ = json.Unmarshal(n.Update, &u)
		if got := strings.Join(modelOptions(u.ConfigOptions), ","); got != "m,bigger-model" {
			t.Fatalf("the update offers %s, want m,bigger-model", got)
		}
	}
}
