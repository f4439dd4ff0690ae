package conformance

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// badAgent is a small ACP agent with deliberate faults, run by re-executing
// the test binary; the suite must catch every one of them.
func badAgent() {
	out := bufio.NewWriter(os.Stdout)
	write := func(v any) {
		b, _ := json.Marshal(v)
		out.Write(b)
		out.WriteByte('\n')
		out.Flush()
	}
	if os.Getenv("CONFORMANCE_BAD_BANNER") == "1" {
		fmt.Fprintln(out, "bad agent starting") // not a JSON-RPC message
		out.Flush()
	}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion json.RawMessage `json:"protocolVersion"`
				SessionID       string          `json:"sessionId"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue // no -32700
		}
		reply := func(res any) { write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": res}) }
		switch m.Method {
		case "initialize":
			reply(map[string]any{"protocolVersion": m.Params.ProtocolVersion, "agentCapabilities": map[string]any{}}) // echoes 2 back
		case "session/new":
			reply(map[string]any{"sessionId": "always-the-same"})
		case "session/prompt":
			chunk := map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{"sessionId": m.Params.SessionID, "update": map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": "hi"}}}}
			reply(map[string]any{"stopReason": "end_turn"})
			write(chunk) // after the response
		case "session/cancel":
			write(map[string]any{"jsonrpc": "2.0", "id": nil, "result": map[string]any{}}) // answers a notification
		default:
			if m.ID != nil {
				reply(map[string]any{}) // instead of -32601
			}
		}
	}
}

func TestTheSuiteCatchesABrokenAgent(t *testing.T) {
	for _, tc := range []struct {
		fault, id, banner, detail string
	}{
		{"echoes an unsupported version", "data/version-negotiation", "0", "protocolVersion: want 1, got 2"},
		{"returns one session id twice", "session/new-distinct", "0", "returned the same id"},
		{"answers unknown methods with a result", "data/unknown-method", "0", ".error: missing"},
		{"prints a banner on stdout", "transport/stdout-purity", "1", "invalid stdout line"},
		{"sends a chunk after the prompt's response", "prompt/basic", "0", "acp-v1#39"},
		{"answers a notification", "data/notifications", "0", "id null"},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			t.Parallel()
			target := Target{Command: os.Args[0], Env: []string{"CONFORMANCE_BAD_AGENT=1", "CONFORMANCE_BAD_BANNER=" + tc.banner}}
			res := Run(t.Context(), target, &Options{Cases: regexp.MustCompile("^" + regexp.QuoteMeta(tc.id) + "$"), Timeout: 10 * time.Second})
			if len(res) != 1 {
				t.Fatalf("ran %d cases", len(res))
			}
			if r := res[0]; r.Status != Fail || !strings.Contains(r.Detail, tc.detail) {
				t.Errorf("%s: %s, want a failure saying %q; detail:\n%s", r.ID, r.Status, tc.detail, r.Detail)
			}
		})
	}
}
