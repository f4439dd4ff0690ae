package conformance

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// fakeAgent is a small ACP agent run by re-executing the test binary
// (CONFORMANCE_FAKE_AGENT=1). Without faults it behaves well enough for the
// plain cases; CONFORMANCE_FAULTS names the deliberate faults it commits,
// comma-separated, and the suite must report each one.
func fakeAgent() {
	faults := map[string]bool{}
	for _, f := range strings.Split(os.Getenv("CONFORMANCE_FAULTS"), ",") {
		faults[f] = true
	}
	out := bufio.NewWriter(os.Stdout)
	write := func(v any) {
		b, _ := json.Marshal(v)
		out.Write(b)
		out.WriteByte('\n')
		out.Flush()
	}
	if faults["banner"] {
		fmt.Fprintln(out, "fake agent starting") // not a JSON-RPC message
		out.Flush()
	}
	reply := func(id json.RawMessage, res any) { write(map[string]any{"jsonrpc": "2.0", "id": id, "result": res}) }
	fail := func(id json.RawMessage, code int, msg string) {
		write(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	}
	initialized := false
	sessions := map[string]bool{}
	var pendingPrompt json.RawMessage // a prompt waiting for the answer to its permission request
	var pendingSession, pendingCall string
	turns := 0
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var env map[string]json.RawMessage
		if json.Unmarshal(sc.Bytes(), &env) != nil {
			e := map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": -32700, "message": "Parse error"}}
			if faults["parse-error-without-id"] {
				delete(e, "id")
			}
			write(e)
			continue
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion json.RawMessage   `json:"protocolVersion"`
				SessionID       string            `json:"sessionId"`
				Prompt          []json.RawMessage `json:"prompt"`
			} `json:"params"`
		}
		_ = json.Unmarshal(sc.Bytes(), &m)
		if m.Method == "" {
			// The answer to our permission request ends the waiting prompt.
			if pendingPrompt != nil {
				write(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{"sessionId": pendingSession, "update": map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": pendingCall, "status": "completed"}}})
				reply(pendingPrompt, map[string]any{"stopReason": "end_turn"})
				pendingPrompt = nil
			}
			continue
		}
		if p, ok := env["params"]; ok && string(p) == "null" && m.ID != nil {
			// JSON-RPC 2.0 §4.2: params, when present, is an object or an array.
			fail(m.ID, -32600, "params must be an object")
			continue
		}
		if m.ID == nil { // a notification
			switch {
			case m.Method == "session/cancel" && faults["answer-cancel"]:
				fail(json.RawMessage("null"), -32601, "Method not found")
			case m.Method != "session/cancel" && faults["answer-notifications-without-id"]:
				write(map[string]any{"jsonrpc": "2.0", "error": map[string]any{"code": -32601, "message": "Method not found"}})
			}
			continue
		}
		if !initialized && m.Method != "initialize" && !faults["no-init-gate"] {
			fail(m.ID, -32600, "initialize first")
			continue
		}
		switch m.Method {
		case "initialize":
			if faults["init-error"] {
				fail(m.ID, -32603, "cannot start")
				continue
			}
			initialized = true
			version := json.RawMessage("1")
			if faults["echo-version"] {
				version = m.Params.ProtocolVersion
			}
			caps := map[string]any{"sessionCapabilities": map[string]any{"list": map[string]any{}}}
			if faults["unknown-cap-key"] {
				caps["mcpCapabilities"] = map[string]any{"http": false, "bogus": true}
			}
			if faults["unstable-cap-key"] {
				// archive: unstable, and not one of the features acp-v1 §25
				// asks for (fork is, and is no finding).
				caps["sessionCapabilities"] = map[string]any{"list": map[string]any{}, "archive": map[string]any{}}
			}
			res := map[string]any{"protocolVersion": version, "agentCapabilities": caps, "authMethods": []any{}}
			if !faults["no-agent-info"] {
				res["agentInfo"] = map[string]any{"name": "fake-agent", "version": "1.0"}
			}
			reply(m.ID, res)
		case "session/new":
			id := fmt.Sprintf("s%d", len(sessions)+1)
			if faults["same-session-id"] {
				id = "always-the-same"
			}
			sessions[id] = true
			reply(m.ID, map[string]any{"sessionId": id})
		case "session/list":
			reply(m.ID, map[string]any{"sessions": []any{}})
		case "session/prompt":
			if !sessions[m.Params.SessionID] && !faults["unknown-session-internal"] {
				write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32002, "message": "Resource not found", "data": map[string]any{"sessionId": m.Params.SessionID}}})
				continue
			}
			if !sessions[m.Params.SessionID] {
				fail(m.ID, -32603, "Internal error")
				continue
			}
			refused := false
			for _, b := range m.Params.Prompt {
				var blk struct{ Type string }
				_ = json.Unmarshal(b, &blk)
				if !slices.Contains([]string{"text", "resource_link"}, blk.Type) && !faults["accept-any-content"] {
					refused = true
				}
			}
			if refused {
				fail(m.ID, -32602, "content type not advertised")
				continue
			}
			sid := m.Params.SessionID
			chunk := map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{"sessionId": sid, "update": map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": "hi"}}}}
			if faults["chunk-after-response"] {
				reply(m.ID, map[string]any{"stopReason": "end_turn"})
				write(chunk)
				continue
			}
			write(chunk)
			if faults["ask-permission"] {
				// Like the TS SDK's example agent: every turn asks before a tool.
				turns++
				call := fmt.Sprintf("call_%d", turns)
				write(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{"sessionId": sid, "update": map[string]any{"sessionUpdate": "tool_call", "toolCallId": call, "title": "Edit a file", "kind": "edit", "status": "pending"}}})
				write(map[string]any{"jsonrpc": "2.0", "id": turns, "method": "session/request_permission", "params": map[string]any{"sessionId": sid, "toolCall": map[string]any{"toolCallId": call}, "options": []any{
					map[string]any{"optionId": "allow", "name": "Allow", "kind": "allow_once"},
					map[string]any{"optionId": "reject", "name": "Reject", "kind": "reject_once"},
				}}})
				pendingPrompt, pendingSession, pendingCall = m.ID, sid, call
				continue
			}
			reply(m.ID, map[string]any{"stopReason": "end_turn"})
		default:
			if faults["unknown-result"] {
				reply(m.ID, map[string]any{}) // instead of -32601
				continue
			}
			fail(m.ID, -32601, "Method not found")
		}
	}
	if faults["linger"] {
		for { // stays alive after stdin closed, until killed
			time.Sleep(time.Hour)
		}
	}
}

// fakeTarget runs the fake agent with the given faults.
func fakeTarget(faults ...string) Target {
	return Target{Command: os.Args[0], Env: []string{"CONFORMANCE_FAKE_AGENT=1", "CONFORMANCE_FAULTS=" + strings.Join(faults, ",")}}
}

// runFake runs the cases whose IDs match ids (anchored) against the fake
// agent and returns the results by ID.
func runFake(t *testing.T, opts *Options, ids string, faults ...string) map[string]Result {
	t.Helper()
	o := Options{Timeout: 20 * time.Second}
	if opts != nil {
		o = *opts
	}
	o.Cases = regexp.MustCompile("^(" + ids + ")$")
	if o.Timeout == 0 {
		o.Timeout = 20 * time.Second
	}
	out := map[string]Result{}
	for _, r := range Run(t.Context(), fakeTarget(faults...), &o) {
		out[r.ID] = r
	}
	return out
}

func TestTheSuiteCatchesABrokenAgent(t *testing.T) {
	for _, tc := range []struct {
		fault, id, detail string
	}{
		{"echo-version", "data/version-negotiation", "protocolVersion: want 1, got 2"},
		{"same-session-id", "session/new-distinct", "returned the same id"},
		{"unknown-result", "data/unknown-method", ".error: missing"},
		{"banner", "transport/stdout-purity", "invalid stdout line"},
		{"chunk-after-response", "prompt/basic", "acp-v1#39"},
		{"answer-cancel", "data/notifications", "id null"},
		// Outside the notification case too, an answer to a notification is
		// caught: the id-null error answers no line the client wrote.
		{"answer-cancel", "prompt/cancel", "acp-v1#7"},
		{"linger", "transport/exit-on-eof", "still running"},
		// Answers without an id, as codex-acp 0.16.0 sends them: to
		// unknown notifications, and to a line that is not JSON.
		{"answer-notifications-without-id", "data/notifications", "acp-v1#7: a response without an id"},
		{"parse-error-without-id", "data/garbage", `acp-v1#8: an error without an id`},
	} {
		t.Run(tc.fault+" "+tc.id, func(t *testing.T) {
			t.Parallel()
			// A short watchdog keeps the wait for an exit that never
			// comes short; the other cases finish long before it.
			r, ok := runFake(t, &Options{Timeout: 6 * time.Second}, regexp.QuoteMeta(tc.id), tc.fault)[tc.id]
			if !ok {
				t.Fatalf("case %s did not run", tc.id)
			}
			if r.Status != Fail || !strings.Contains(r.Detail, tc.detail) {
				t.Errorf("%s: %s, want a failure saying %q; detail:\n%s", r.ID, r.Status, tc.detail, r.Detail)
			}
		})
	}
}

// TestTheFakeAgentPassesWithoutFaults keeps the fault tests honest: each
// case they use passes against the agent when it commits no fault.
func TestTheFakeAgentPassesWithoutFaults(t *testing.T) {
	ids := "data/version-negotiation|session/new-distinct|data/unknown-method|transport/stdout-purity|prompt/basic|data/notifications|prompt/cancel|transport/exit-on-eof|cap/list|data/before-initialize|data/unknown-session|prompt/unsupported-content|init/agent-info"
	res := runFake(t, nil, ids)
	for _, id := range strings.Split(ids, "|") {
		r, ok := res[id]
		if !ok {
			t.Errorf("case %s did not run", id)
			continue
		}
		if r.Status != Pass {
			t.Errorf("%s: %s against the fault-free agent:\n%s", id, r.Status, r.Detail)
		}
	}
	if Failed(slices.Collect(func(yield func(Result) bool) {
		for _, r := range res {
			if !yield(r) {
				return
			}
		}
	})) {
		t.Errorf("Failed reports a failure for a run that passed")
	}
}

func TestPolicyChecksAreAdviceAndDoNotFailTheRun(t *testing.T) {
	ids := "data/before-initialize|data/unknown-session|prompt/unsupported-content"
	res := runFake(t, nil, ids, "no-init-gate", "unknown-session-internal", "accept-any-content")
	var all []Result
	for _, id := range strings.Split(ids, "|") {
		r, ok := res[id]
		if !ok {
			t.Fatalf("case %s did not run", id)
		}
		all = append(all, r)
		if r.Status != Advice {
			t.Errorf("%s: %s, want advice (it checks dshd's policy, not the protocol); detail:\n%s", id, r.Status, r.Detail)
		}
		if !strings.Contains(r.Detail, ">> ") || !strings.Contains(r.Detail, "<< ") {
			t.Errorf("%s: the advice does not show what was sent and received:\n%s", id, r.Detail)
		}
	}
	if Failed(all) {
		t.Errorf("advice made the run fail")
	}
	var table strings.Builder
	if err := WriteTable(&table, all); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "advice (never a failure): 3 items, 3 cases") {
		t.Errorf("the summary does not count the advice:\n%s", table.String())
	}
}

func TestASetupFindingIsReportedOnceAndTheCasesGoOn(t *testing.T) {
	schema := schemaSet(t)
	ids := "init/baseline|prompt/basic|session/new-distinct|data/handshake"
	res := runFake(t, &Options{Schema: schema}, ids, "unknown-cap-key", "unstable-cap-key")
	for _, id := range strings.Split(ids, "|") {
		if r := res[id]; r.Status != Pass {
			t.Errorf("%s: %s; a finding in initialize must not fail every case:\n%s", id, r.Status, r.Detail)
		}
	}
	var found []Result
	for _, r := range res {
		if strings.HasPrefix(r.ID, "findings/") {
			found = append(found, r)
		}
	}
	if len(found) == 0 {
		t.Fatalf("no findings result; results: %v", keys(res))
	}
	var detail strings.Builder
	for _, r := range found {
		detail.WriteString(r.Detail + "\n")
	}
	d := detail.String()
	for _, want := range []string{
		"agentCapabilities.mcpCapabilities.bogus", "McpCapabilities", // the key and the rule it breaks
		"agentCapabilities.sessionCapabilities.archive", "schema.unstable.json", // an unstable key is named as such
		`>> {`, `<< {"id":0,"jsonrpc":"2.0","result":{"agentCapabilities"`, // the exchange
	} {
		if !strings.Contains(d, want) {
			t.Errorf("the findings do not say %q:\n%s", want, d)
		}
	}
	if n := strings.Count(d, "mcpCapabilities.bogus"); n != 1 {
		t.Errorf("the unknown key is reported %d times, want once:\n%s", n, d)
	}
	bogus, fork := findingStatus(found, "bogus"), findingStatus(found, "archive")
	if bogus != Fail {
		t.Errorf("a key no schema defines is %q, want fail", bogus)
	}
	if fork != Advice {
		t.Errorf("a key only the unstable schema defines is %q, want advice", fork)
	}
}

// findingStatus is the status of the result whose finding (not its
// exchange, which shows the whole message) names key.
func findingStatus(found []Result, key string) Status {
	for _, r := range found {
		for _, l := range strings.Split(r.Detail, "\n") {
			if (strings.HasPrefix(l, "finding: ") || strings.HasPrefix(l, "advice: ")) && strings.Contains(l, key) {
				return r.Status
			}
		}
	}
	return ""
}

func keys(m map[string]Result) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestCapListSendsNoNullParams(t *testing.T) {
	res := runFake(t, &Options{Transcripts: true}, "cap/list")
	r := res["cap/list"]
	if r.Status != Pass {
		t.Errorf("cap/list: %s against an agent that refuses \"params\": null as JSON-RPC requires:\n%s", r.Status, r.Detail)
	}
	for _, tr := range r.Transcripts {
		for _, l := range tr {
			if l.Dir == ToAgent && strings.Contains(string(l.Raw), `"params":null`) {
				t.Errorf("the suite sent %s", l.Raw)
			}
		}
	}
}

func TestTheClientAnswersPermissionRequests(t *testing.T) {
	r := runFake(t, nil, "prompt/basic", "ask-permission")["prompt/basic"]
	if r.Status != Pass {
		t.Errorf("prompt/basic: %s against an agent that asks permission in every turn (every client must answer session/request_permission):\n%s", r.Status, r.Detail)
	}
}

func TestAFailedInitializeShowsTheExchange(t *testing.T) {
	res := runFake(t, nil, "prompt/basic", "init-error")
	var all strings.Builder
	for _, r := range res {
		if r.Status != Fail {
			t.Errorf("%s: %s, want fail when initialize fails", r.ID, r.Status)
		}
		all.WriteString(r.Detail + "\n")
	}
	for _, want := range []string{`>> {"id":0,"jsonrpc":"2.0","method":"initialize"`, `<< {"error":{"code":-32603,"message":"cannot start"}`} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("the failure does not show %q:\n%s", want, all.String())
		}
	}
}

func TestAViolationShowsTheLineThatBrokeIt(t *testing.T) {
	r := runFake(t, nil, "prompt/basic", "chunk-after-response")["prompt/basic"]
	// The violation is followed by the offending line and, for a
	// response, the request it answers.
	re := regexp.MustCompile(`violation acp-v1#39: [^\n]*\n\s+<< \{[^\n]*agent_message_chunk`)
	if !re.MatchString(r.Detail) {
		t.Errorf("the violation does not show the line that broke the rule:\n%s", r.Detail)
	}
}
