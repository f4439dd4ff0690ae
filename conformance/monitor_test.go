package conformance

import (
	"strings"
	"testing"
)

// feed runs lines through a monitor: ">> " lines as sent, "<< " lines as
// received (with the method of the request each response answers), and
// returns the violated items.
func feed(t *testing.T, lines ...string) []Violation {
	t.Helper()
	mo := newMonitor()
	pending := map[string]string{}
	for i, s := range lines {
		dir, raw, _ := strings.Cut(s, " ")
		m, err := parseMsg([]byte(raw))
		if dir == ">>" {
			if err != nil {
				t.Fatalf("line %d: %v", i, err)
			}
			if m.IsRequest() {
				pending[m.IDKey()] = m.Method
			}
			mo.send(m)
			continue
		}
		l := &Line{Seq: i, Dir: FromAgent, Raw: []byte(raw), Msg: m, Err: err}
		if err == nil && m.IsResponse() {
			l.ReplyTo = pending[m.IDKey()]
			delete(pending, m.IDKey())
		}
		mo.recv(l)
	}
	return mo.finish()
}

const (
	initNoCaps   = `>> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`
	initOk       = `<< {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}`
	newSession   = `>> {"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`
	newSessionOk = `<< {"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}`
	promptS1     = `>> {"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`
)

func TestTheMonitorFlagsBrokenRules(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines []string
		item  string // "" wants no violation
	}{
		{"a clean turn", []string{initNoCaps, initOk, newSession, newSessionOk, promptS1,
			`<< {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`,
			`<< {"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}`}, ""},
		{"a log line on stdout", []string{`<< starting up...`}, "acp-v1#1"},
		{"a message without jsonrpc", []string{`<< {"id":1,"result":{}}`}, "acp-v1#4"},
		{"a response with both result and error", []string{`>> {"jsonrpc":"2.0","id":1,"method":"x","params":{}}`, `<< {"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}`}, "acp-v1#6"},
		{"two responses for one id", []string{`>> {"jsonrpc":"2.0","id":1,"method":"x","params":{}}`, `<< {"jsonrpc":"2.0","id":1,"result":{}}`, `<< {"jsonrpc":"2.0","id":1,"result":{}}`}, "acp-v1#5"},
		{"a response in another id type", []string{`>> {"jsonrpc":"2.0","id":"1","method":"x","params":{}}`, `<< {"jsonrpc":"2.0","id":1,"result":{}}`}, "acp-v1#5"},
		{"an update before the session/new response", []string{initNoCaps, initOk, newSession,
			`<< {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"usage_update","used":1,"size":2}}}`}, "subagents#2"},
		{"fs without the capability", []string{initNoCaps, initOk, newSession, newSessionOk, promptS1,
			`<< {"jsonrpc":"2.0","id":0,"method":"fs/read_text_file","params":{"sessionId":"s1","path":"/w/a"}}`}, "acp-v1#19"},
		{"a write with read-only fs", []string{`>> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true}}}}`, initOk, newSession, newSessionOk,
			`<< {"jsonrpc":"2.0","id":0,"method":"fs/write_text_file","params":{"sessionId":"s1","path":"/w/a","content":""}}`}, "acp-v1#20"},
		{"a chunk after the prompt's response", []string{initNoCaps, initOk, newSession, newSessionOk, promptS1,
			`<< {"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}`,
			`<< {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"late"}}}}`}, "acp-v1#39"},
		{"an error for a cancelled prompt", []string{initNoCaps, initOk, newSession, newSessionOk, promptS1,
			`>> {"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}`,
			`<< {"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"aborted"}}`}, "acp-v1#41"},
		{"an invented stop reason", []string{initNoCaps, initOk, newSession, newSessionOk, promptS1, `<< {"jsonrpc":"2.0","id":2,"result":{"stopReason":"done"}}`}, "acp-v1#38"},
		{"a tool update for an unknown call", []string{initNoCaps, initOk, newSession, newSessionOk, promptS1,
			`<< {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"t9","status":"completed"}}}`}, "acp-v1#52"},
		{"a relative diff path", []string{initNoCaps, initOk, newSession, newSessionOk, promptS1,
			`<< {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"w","content":[{"type":"diff","path":"a.txt","newText":"x"}]}}}`}, "acp-v1#53"},
		{"modeId instead of currentModeId", []string{initNoCaps, initOk, newSession, newSessionOk,
			`<< {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"current_mode_update","modeId":"ask"}}}`}, "acp-v1#60"},
		{"a boolean option for a client without the capability", []string{initNoCaps, initOk, newSession,
			`<< {"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1","configOptions":[{"type":"boolean","id":"b","name":"B","currentValue":true}]}}`}, "acp-v1#63"},
		{"subagent traffic without the opt-in", []string{initNoCaps, initOk, newSession, newSessionOk,
			`<< {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"subagent_update","sessionId":"s1/sa1"}}}`}, "subagents#1"},
		{"child traffic before its announcement", []string{`>> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"subagents":{}}}}`, initOk, newSession, newSessionOk,
			`<< {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1/sa1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`}, "subagents#4"},
		{"a child announced under two parents", []string{`>> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"subagents":{}}}}`, initOk, newSession, newSessionOk,
			`<< {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"subagent_update","sessionId":"c1"}}}`,
			`<< {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"subagent_update","sessionId":"c2"}}}`,
			`<< {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"c2","update":{"sessionUpdate":"subagent_update","sessionId":"c1"}}}`}, "subagents#6"},
		{"a session item without text", []string{`>> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"subagents":{}}}}`, initOk, newSession, newSessionOk,
			`<< {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"subagent_update","sessionId":"c1"}}}`,
			`<< {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"x","content":[{"type":"session","sessionId":"c1"}]}}}`}, "subagents#15"},
		{"a terminal used after its release", []string{`>> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"terminal":true}}}`, initOk, newSession, newSessionOk, promptS1,
			`<< {"jsonrpc":"2.0","id":5,"method":"terminal/create","params":{"sessionId":"s1","command":"ls"}}`,
			`>> {"jsonrpc":"2.0","id":5,"result":{"terminalId":"t1"}}`,
			`<< {"jsonrpc":"2.0","id":6,"method":"terminal/release","params":{"sessionId":"s1","terminalId":"t1"}}`,
			`<< {"jsonrpc":"2.0","id":7,"method":"terminal/output","params":{"sessionId":"s1","terminalId":"t1"}}`}, "acp-v1#68"},
		{"a terminal never released before the turn ends", []string{`>> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"terminal":true}}}`, initOk, newSession, newSessionOk, promptS1,
			`<< {"jsonrpc":"2.0","id":5,"method":"terminal/create","params":{"sessionId":"s1","command":"ls"}}`,
			`>> {"jsonrpc":"2.0","id":5,"result":{"terminalId":"t1"}}`,
			`<< {"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}`}, "acp-v1#68"},
		{"session_info_update carrying a cwd", []string{initNoCaps, initOk, newSession, newSessionOk,
			`<< {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"session_info_update","cwd":"/w"}}}`}, "acp-v1#37"},
		{"a negative usage", []string{initNoCaps, initOk, newSession, newSessionOk,
			`<< {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"usage_update","used":-1,"size":10}}}`}, "acp-v1#59"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := feed(t, tc.lines...)
			if tc.item == "" {
				if len(vs) > 0 {
					t.Errorf("unexpected violations: %v", vs)
				}
				return
			}
			for _, v := range vs {
				if v.Item == tc.item {
					return
				}
			}
			t.Errorf("want a violation of %s, got %v", tc.item, vs)
		})
	}
}
