package mcp

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

// hostile configures the hand-written misbehaving server
// (hostile_helper_test.go) with the tools/list answer list.
func hostile(t testing.TB, list string) ServerConfig {
	t.Helper()
	return helperServer(t, "h", "hostile", EnvVar{Name: hostileListEnv, Value: list})
}

// logTo returns a logger writing text lines to buf, debug included.
func logTo(buf *testkit.SyncBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// warnings returns the log's lines at WARN that contain msg.
func warnLines(buf *testkit.SyncBuffer, msg string) []string {
	var out []string
	for _, l := range strings.Split(buf.String(), "\n") {
		if strings.Contains(l, "level=WARN") && strings.Contains(l, msg) {
			out = append(out, l)
		}
	}
	return out
}

func TestStdoutLineThatIsNotJSONIsSkipped(t *testing.T) {
	var buf testkit.SyncBuffer
	_, reg := mustConnect(t, &Options{Logger: logTo(&buf)}, hostile(t, ""))
	for range 2 {
		if res := run(t, reg, "mcp__h__banner", nil, nil); res.IsError || res.Output != "after the banner" {
			t.Fatalf("a banner on stdout broke the call: %+v", res)
		}
	}
	w := warnLines(&buf, "not a JSON-RPC message")
	if len(w) != 1 || !strings.Contains(w[0], "mcp_server=h") || !strings.Contains(w[0], "Server ready!") {
		t.Errorf("want one warning naming the server and quoting the line, got %q\n%s", w, buf.String())
	}
}

func TestAnswerOverTheMessageLimitFailsOnlyItsCall(t *testing.T) {
	var buf testkit.SyncBuffer
	const limit = 1 << 20
	_, reg := mustConnect(t, &Options{Logger: logTo(&buf), MaxMessageBytes: limit}, hostile(t, ""))
	for range 2 {
		res := run(t, reg, "mcp__h__bigtext", nil, map[string]any{"n": 3 * limit})
		if !res.IsError || !strings.Contains(res.Output, "over 1048576 bytes") || !strings.Contains(res.Output, "--mcp-max-message-bytes") || !strings.Contains(res.Output, `"h"`) {
			t.Fatalf("an oversized answer: %.300s", res.Output)
		}
	}
	if res := run(t, reg, "mcp__h__bigtext", nil, map[string]any{"n": 10}); res.IsError || res.Output != "xxxxxxxxxx" {
		t.Errorf("the server is not usable after an oversized answer: %.300s", res.Output)
	}
	w := warnLines(&buf, "over the limit")
	if len(w) != 1 || !strings.Contains(w[0], "mcp_server=h") || !strings.Contains(w[0], "mcp-max-message-bytes") {
		t.Errorf("want one warning naming the server and the setting, got %q", w)
	}
}
