package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// schemaSet loads the official schemas from conformance/interop's npm
// packages, skipping the test where they are not installed.
func schemaSet(t *testing.T) *SchemaSet {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := FindSchemaDir(filepath.Dir(wd))
	if err != nil {
		t.Skipf("%v; `make test` runs npm ci first", err)
	}
	s, err := LoadSchemas(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestEveryMessageValidatesAgainstTheOfficialSchema checks every line dshd
// wrote during the conformance run against @agentclientprotocol/sdk's
// schema/v1/schema.json (schema.unstable.json for subagent messages), as
// published and with unknown keys refused.
func TestEveryMessageValidatesAgainstTheOfficialSchema(t *testing.T) {
	s := schemaSet(t)
	res := results(t)
	checked, total := 0, 0
	byText := map[string][]string{}
	for _, r := range res {
		for _, tr := range r.Transcripts {
			for _, l := range tr {
				if l.Dir != FromAgent {
					continue
				}
				total++
				vs, ok := s.CheckLine(l)
				if ok {
					checked++
				}
				for _, v := range vs {
					key := v.Item + " " + v.Text
					byText[key] = append(byText[key], fmt.Sprintf("%s line %d: %s", r.ID, l.Seq, clip(l.Raw, 300)))
				}
			}
		}
	}
	keys := make([]string, 0, len(byText))
	for k := range byText {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ex := byText[k]
		t.Errorf("%s\n  %d messages, e.g. %s", k, len(ex), strings.Join(ex[:min(2, len(ex))], "\n  "))
	}
	if checked == 0 {
		t.Fatalf("no message was checked")
	}
	t.Logf("%d of %d agent lines validated against the schema", checked, total)
}

func TestStrictSchemaRefusesUnknownKeys(t *testing.T) {
	s := schemaSet(t)
	for _, tc := range []struct {
		name, line string
		ok         bool
	}{
		{"a plain chunk", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`, true},
		{"a key at the update's root", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"},"extra":1}}}`, false},
		{"a key in a content block", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi","extra":1}}}}`, false},
		{"a key in a tool call", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t","title":"x","extra":true}}}`, false},
		{"custom data under _meta", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t","title":"x","_meta":{"x":1}}}}`, true},
		{"an unknown update tag", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"bogus"}}}`, false},
		{"a subagent update", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"subagent_update","sessionId":"s/sa1","title":"t","capabilities":{"cancel":{}},"state":{"state":"idle","stopReason":"end_turn"}}}}`, true},
		{"a session item next to text", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t","content":[{"type":"content","content":{"type":"text","text":"x"}},{"type":"session","sessionId":"s/sa1"}]}}}`, true},
		{"a permission request", `{"jsonrpc":"2.0","id":1,"method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"t"},"options":[{"optionId":"a","name":"Allow","kind":"allow_once"}]}}`, true},
		{"a permission option with a stray key", `{"jsonrpc":"2.0","id":1,"method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"t"},"options":[{"optionId":"a","name":"Allow","kind":"allow_once","x":1}]}}`, false},
		{"a key in a config option", `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s","configOptions":[{"type":"select","id":"m","name":"M","currentValue":"a","options":[{"value":"a","name":"A"}],"x":1}]}}`, false},
		{"a key in a select value", `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s","configOptions":[{"type":"select","id":"m","name":"M","currentValue":"a","options":[{"value":"a","name":"A","x":1}]}]}}`, false},
		{"a well-formed session/new result", `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s","modes":{"currentModeId":"a","availableModes":[{"id":"a","name":"A"}]},"configOptions":[{"type":"select","id":"m","name":"M","category":"mode","currentValue":"a","options":[{"value":"a","name":"A","description":"d"}]}]}}`, true},
		{"a key in a mode", `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s","modes":{"currentModeId":"a","availableModes":[{"id":"a","name":"A","x":1}]}}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := parseMsg([]byte(tc.line))
			if err != nil {
				t.Fatal(err)
			}
			l := &Line{Dir: FromAgent, Raw: []byte(tc.line), Msg: m}
			if m.IsResponse() {
				l.ReplyTo = "session/new"
			}
			vs, checked := s.CheckLine(l)
			if !checked {
				t.Fatal("the line was not checked")
			}
			if (len(vs) == 0) != tc.ok {
				t.Errorf("violations %v, want ok=%v", vs, tc.ok)
			}
		})
	}
}

// TestTheSchemaCheckKnowsTheNewerAndTheUnstableShapes: notices, compaction
// and tool-call names are stable since schema 1.25; usage on a prompt
// response, sessionCapabilities.fork and session/fork are the unstable
// features acp-v1 §25 asks for, checked against schema.unstable.json.
func TestTheSchemaCheckKnowsTheNewerAndTheUnstableShapes(t *testing.T) {
	s := schemaSet(t)
	for _, tc := range []struct {
		name, replyTo, line string
		ok                  bool
	}{
		{"a named tool call", "", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t","title":"x","name":"read_file"}}}`, true},
		{"a notice", "", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"notice","severity":"warning","title":"x"}}}`, true},
		{"a notice without a title", "", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"notice","severity":"warning","title":""}}}`, false},
		{"a completed compaction", "", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"compaction_update","compactionId":"c","status":"completed","summary":[{"type":"text","text":"s"}]}}}`, true},
		{"a prompt response with usage", "session/prompt", `{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn","usage":{"totalTokens":3,"inputTokens":2,"outputTokens":1,"cachedReadTokens":1}}}`, true},
		{"a prompt response with bad usage", "session/prompt", `{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn","usage":{"totalTokens":"3","inputTokens":2,"outputTokens":1}}}`, false},
		{"an initialize result advertising fork", "initialize", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{"sessionCapabilities":{"fork":{}}},"authMethods":[]}}`, true},
		{"a session/fork result", "session/fork", `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s2"}}`, true},
		{"a session/fork result with a stray key", "session/fork", `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s2","x":1}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := parseMsg([]byte(tc.line))
			if err != nil {
				t.Fatal(err)
			}
			l := &Line{Dir: FromAgent, Raw: []byte(tc.line), Msg: m, ReplyTo: tc.replyTo}
			vs, checked := s.CheckLine(l)
			if !checked {
				t.Fatal("the line was not checked")
			}
			if (len(vs) == 0) != tc.ok {
				t.Errorf("violations %v, want ok=%v", vs, tc.ok)
			}
		})
	}
}
