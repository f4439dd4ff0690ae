package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateWire = flag.Bool("update-wire", false, "rewrite testdata/wire.golden from the current encoders")

// wireCase is a Go value built in code, the bytes it must marshal to
// (testdata/wire.golden) and how to decode those bytes back. Unlike the
// JSON goldens, which start from JSON, these start from Go values, so
// they pin what the encoders do with nil lists, omitted patches, pointer
// and value receivers and the fast path.
type wireCase struct {
	name   string
	value  any
	decode func([]byte) (any, error)
}

func ptr[T any](v T) *T { return &v }

func wireCases() []wireCase {
	text := TextBlock("héllo <b>&</b>")
	meta := Meta{"k": "v"}
	ann := &Annotations{Audience: []Role{RoleUser}, Priority: ptr(0.5), LastModified: "2026-01-01T00:00:00Z"}
	tc := ToolCall{ToolCallID: "t1", Title: "Read", Name: "read_file", Kind: ToolKindRead, Status: ToolCallStatusPending,
		Content:   []ToolCallContent{ToolText("x"), &Diff{Path: "/a", OldText: ptr("o"), NewText: "n"}, &Terminal{TerminalID: "term"}, &SessionReference{SessionID: "c"}},
		Locations: []ToolCallLocation{{Path: "/a", Line: ptr[uint32](3)}}, RawInput: json.RawMessage(`{"path":"/a"}`), RawOutput: json.RawMessage(`"ok"`), Meta: meta}
	selectOpt := &SelectConfigOption{ID: "mode", Name: "Mode", Category: ConfigCategoryMode, CurrentValue: "ask",
		Options: SelectOptions{Options: []SelectOption{{Value: "ask", Name: "Ask"}}}}
	groupOpt := &SelectConfigOption{ID: "model", Name: "Model", CurrentValue: "m",
		Options: SelectOptions{Groups: []SelectGroup{{Group: "g", Name: "G", Options: []SelectOption{{Value: "m", Name: "M"}}}}}}
	boolOpt := &BooleanConfigOption{ID: "b", Name: "B", CurrentValue: true, Meta: meta}
	servers := []McpServer{&McpServerStdio{Name: "s", Command: "/bin/s"}, &McpServerHTTP{Name: "h", URL: "http://h"}, &McpServerSSE{Name: "e", URL: "http://e", Headers: []HTTPHeader{{Name: "A", Value: "b"}}}}

	update := func(name string, u any) wireCase {
		return wireCase{"update_" + name, u, func(b []byte) (any, error) { return UnmarshalSessionUpdate(b) }}
	}
	block := func(name string, c any) wireCase {
		return wireCase{"block_" + name, c, func(b []byte) (any, error) { return UnmarshalContentBlock(b) }}
	}
	tool := func(name string, c any) wireCase {
		return wireCase{"toolcontent_" + name, c, func(b []byte) (any, error) { return UnmarshalToolCallContent(b) }}
	}
	state := func(name string, s any) wireCase {
		return wireCase{"state_" + name, s, func(b []byte) (any, error) { return UnmarshalStateUpdate(b) }}
	}
	prop := func(name string, p any) wireCase {
		return wireCase{"property_" + name, p, func(b []byte) (any, error) { return UnmarshalElicitationPropertySchema(b) }}
	}
	value := func(name string, v any, decode func([]byte) (any, error)) wireCase { return wireCase{name, v, decode} }

	return []wireCase{
		update("user_chunk", &UserMessageChunk{Content: text, MessageID: "m1"}),
		update("agent_chunk", &AgentMessageChunk{Content: text}),
		update("agent_chunk_value", AgentMessageChunk{Content: &ImageContent{Data: "AA", MimeType: "image/png"}, Meta: meta}),
		update("thought_chunk", &AgentThoughtChunk{Content: text, MessageID: "m2", Meta: meta}),
		update("tool_call", &tc),
		update("tool_call_value", tc),
		update("tool_call_minimal", &ToolCall{ToolCallID: "t2", Title: "T"}),
		update("tool_call_empty_lists", &ToolCall{ToolCallID: "t3", Title: "T", Content: []ToolCallContent{}, Locations: []ToolCallLocation{}}),
		update("tool_call_update", &ToolCallUpdate{ToolCallID: "t1", Status: ToolCallStatusCompleted, Content: []ToolCallContent{ToolText("done")}}),
		update("tool_call_update_minimal", &ToolCallUpdate{ToolCallID: "t1"}),
		update("tool_call_update_clears", &ToolCallUpdate{ToolCallID: "t1", Content: []ToolCallContent{}, Locations: []ToolCallLocation{}}),
		update("plan", &Plan{Entries: []PlanEntry{{Content: "a", Priority: PlanPriorityHigh, Status: PlanStatusPending, Meta: meta}}}),
		update("plan_nil", &Plan{}),
		update("commands", &AvailableCommandsUpdate{AvailableCommands: []AvailableCommand{{Name: "c", Description: "d", Input: &AvailableCommandInput{Hint: "h"}}}}),
		update("commands_nil", &AvailableCommandsUpdate{Meta: meta}),
		update("mode", &CurrentModeUpdate{CurrentModeID: "ask"}),
		update("config", &ConfigOptionUpdate{ConfigOptions: []SessionConfigOption{selectOpt, groupOpt, boolOpt}}),
		update("config_nil", &ConfigOptionUpdate{}),
		update("info", &SessionInfoUpdate{Title: Set("t"), UpdatedAt: Null[string]()}),
		update("info_empty", &SessionInfoUpdate{}),
		update("usage", &UsageUpdate{Used: 1, Size: 2, Cost: &Cost{Amount: 0.5, Currency: "USD"}, Meta: Meta{"u": map[string]any{"n": 1}}}),
		update("notice", &Notice{Severity: NoticeWarning, Title: "t", Description: "d"}),
		update("compaction", &CompactionUpdate{CompactionID: "c1", Status: CompactionCompleted, Summary: Set([]ContentBlock{text}), Error: Null[string]()}),
		update("compaction_minimal", &CompactionUpdate{CompactionID: "c1", Status: CompactionInProgress}),
		update("compaction_chunk", &CompactionSummaryChunk{CompactionID: "c1", Content: text, Meta: meta}),
		update("subagent", &SubagentUpdate{SessionID: "c", Title: Set("t"), Description: Null[string](),
			Capabilities: Set(SubagentSessionCapabilities{Cancel: &EmptyCapability{}}), State: Set[StateUpdate](&IdleState{StopReason: StopReasonEndTurn}),
			Cwd: Set("/w"), AdditionalDirectories: Set([]string{}), Meta: Set(meta)}),
		update("subagent_minimal", &SubagentUpdate{SessionID: "c"}),
		update("session_message", &SessionMessage{MessageID: "m", SenderSessionID: Set[SessionID]("a"), RecipientSessionID: Null[SessionID](),
			SenderMessageID: Set[MessageID]("x"), Content: Set([]ContentBlock{text}), Meta: Null[Meta]()}),
		update("session_message_chunk", &SessionMessageChunk{MessageID: "m", Content: text, Meta: meta}),

		block("text", text),
		block("text_annotated", &TextContent{Text: "t", Annotations: ann, Meta: meta}),
		block("text_value", TextContent{Text: "v"}),
		block("image", &ImageContent{Data: "AA", MimeType: "image/png", URI: "file:///i"}),
		block("audio", &AudioContent{Data: "AA", MimeType: "audio/wav", Annotations: ann}),
		block("link", &ResourceLink{URI: "file:///a", Name: "a", MimeType: "text/plain", Title: "A", Description: "d", Size: ptr[int64](3)}),
		block("resource_text", &EmbeddedResource{Resource: &TextResourceContents{URI: "file:///a", Text: "t", MimeType: "text/plain"}, Annotations: ann}),
		block("resource_blob", &EmbeddedResource{Resource: &BlobResourceContents{URI: "file:///b", Blob: "AA"}, Meta: meta}),

		tool("content", ToolText("x")),
		tool("diff", &Diff{Path: "/a", OldText: ptr(""), NewText: "n", Meta: meta}),
		tool("diff_new", Diff{Path: "/a", NewText: "n"}),
		tool("terminal", &Terminal{TerminalID: "term"}),
		tool("session", &SessionReference{SessionID: "c", Meta: meta}),

		state("running", &RunningState{}),
		state("requires_action", RequiresActionState{Meta: meta}),
		state("idle", &IdleState{StopReason: StopReasonError, Error: &Error{Code: -32603, Message: "boom"},
			Usage: &Usage{TotalTokens: 3, InputTokens: 1, OutputTokens: 2, ThoughtTokens: ptr[uint64](1)}}),
		state("unknown", &UnknownState{}),
		state("other_raw", &OtherState{State: "_x", Raw: json.RawMessage(`{"state":"_x","n":1}`)}),
		state("other_bare", &OtherState{State: "_y"}),

		prop("string", &StringPropertySchema{Title: "s", MinLength: ptr[uint32](1), Enum: []string{"a"}, OneOf: []EnumOption{{Const: "a", Title: "A"}}}),
		prop("number", &NumberPropertySchema{Minimum: ptr(1.5)}),
		prop("integer", &NumberPropertySchema{Integer: true, Default: ptr(2.0)}),
		prop("boolean", BooleanPropertySchema{Default: ptr(true)}),
		prop("multi", &MultiSelectPropertySchema{Items: MultiSelectItems{Enum: []string{"a"}}}),
		prop("multi_titled", &MultiSelectPropertySchema{Items: MultiSelectItems{AnyOf: []EnumOption{{Const: "a", Title: "A"}}, Meta: meta}}),
		prop("multi_nil", &MultiSelectPropertySchema{}),
		prop("unknown_raw", &UnknownPropertySchema{Type: "_c", Raw: json.RawMessage(`{"type":"_c","x":1}`)}),
		prop("unknown_bare", &UnknownPropertySchema{Type: "_d"}),

		value("mcp_servers", servers, func(b []byte) (any, error) { return decodeList(b, UnmarshalMcpServer, false) }),
		value("auth_methods", []AuthMethod{&AuthMethodAgent{ID: "a", Name: "A"}, &AuthMethodTerminal{ID: "t", Name: "T", Args: []string{"x"}, Env: map[string]string{"K": "V"}}},
			func(b []byte) (any, error) { return decodeList(b, UnmarshalAuthMethod, false) }),
		value("outcome_selected", Selected("allow"), func(b []byte) (any, error) { return UnmarshalRequestPermissionOutcome(b) }),
		value("outcome_cancelled", &CancelledPermissionOutcome{Meta: meta}, func(b []byte) (any, error) { return UnmarshalRequestPermissionOutcome(b) }),
		value("config_options", []SessionConfigOption{selectOpt, groupOpt, boolOpt}, func(b []byte) (any, error) { return decodeList(b, UnmarshalSessionConfigOption, true) }),

		wireOf("session_new", NewSessionRequest{Cwd: "/w", AdditionalDirectories: []string{"/x"}, Meta: meta}),
		wireOf("session_new_servers", NewSessionRequest{Cwd: "/w", McpServers: servers}),
		wireOf("session_new_response", NewSessionResponse{SessionID: "s", Modes: &SessionModeState{CurrentModeID: "ask", AvailableModes: []SessionMode{{ID: "ask", Name: "Ask"}}}, ConfigOptions: []SessionConfigOption{selectOpt}}),
		wireOf("session_load", LoadSessionRequest{SessionID: "s", Cwd: "/w"}),
		wireOf("session_load_response", LoadSessionResponse{ConfigOptions: []SessionConfigOption{boolOpt}}),
		wireOf("session_resume", ResumeSessionRequest{SessionID: "s", Cwd: "/w"}),
		wireOf("session_resume_servers", ResumeSessionRequest{SessionID: "s", Cwd: "/w", McpServers: servers, AdditionalDirectories: []string{"/x"}}),
		wireOf("session_fork", ForkSessionRequest{SessionID: "s", Cwd: "/w", Meta: meta}),
		wireOf("session_list_response", ListSessionsResponse{}),
		wireOf("session_list_response_full", ListSessionsResponse{Sessions: []SessionInfo{{SessionID: "s", Cwd: "/w", Title: "t"}}, NextCursor: "n"}),
		wireOf("initialize_request", InitializeRequest{ProtocolVersion: 1, ClientCapabilities: ClientCapabilities{FS: FileSystemCapabilities{ReadTextFile: true}, Subagents: &SubagentCapabilities{}}, ClientInfo: &Implementation{Name: "c", Version: "1"}}),
		wireOf("initialize_response", InitializeResponse{ProtocolVersion: 1, AgentCapabilities: AgentCapabilities{LoadSession: true, SessionCapabilities: SessionCapabilities{List: &EmptyCapability{}}}}),
		wireOf("prompt", PromptRequest{SessionID: "s", Prompt: []ContentBlock{text, &ResourceLink{URI: "u", Name: "n"}}}),
		wireOf("prompt_nil", PromptRequest{SessionID: "s"}),
		wireOf("prompt_response", PromptResponse{StopReason: StopReasonEndTurn, Usage: &Usage{TotalTokens: 1}}),
		wireOf("permission_request", RequestPermissionRequest{SessionID: "s", ToolCall: ToolCallUpdate{ToolCallID: "t", Title: "T", Content: []ToolCallContent{ToolText("x")}},
			Options: []PermissionOption{{OptionID: "a", Name: "Allow", Kind: PermissionAllowOnce}}}),
		wireOf("permission_response", RequestPermissionResponse{Outcome: Selected("a"), Meta: meta}),
		wireOf("set_config_select", SetSessionConfigOptionRequest{SessionID: "s", ConfigID: "mode", Value: SelectValue("ask")}),
		wireOf("set_config_bool", SetSessionConfigOptionRequest{SessionID: "s", ConfigID: "b", Value: BoolValue(true)}),
		wireOf("set_config_response", SetSessionConfigOptionResponse{}),
		wireOf("set_config_response_full", SetSessionConfigOptionResponse{ConfigOptions: []SessionConfigOption{groupOpt}}),
		wireOf("terminal_create", CreateTerminalRequest{SessionID: "s", Command: "ls", Args: []string{"-l"}, Env: []EnvVariable{{Name: "A", Value: "b"}}}),
		wireOf("elicitation_form", CreateElicitationRequest{Mode: ElicitationModeForm, Message: "m", SessionID: "s",
			RequestedSchema: &ElicitationSchema{Properties: map[string]ElicitationPropertySchema{"a": &StringPropertySchema{}, "n": &NumberPropertySchema{Integer: true}}}}),
		wireOf("elicitation_form_empty", CreateElicitationRequest{Mode: ElicitationModeForm, Message: "m", RequestID: IntRequestID(4), RequestedSchema: &ElicitationSchema{}}),
		wireOf("notification", SessionNotification{SessionID: "s", Update: &ToolCallUpdate{ToolCallID: "t", Status: ToolCallStatusInProgress}}),
		wireOf("notification_meta", SessionNotification{SessionID: "s", Update: &AgentMessageChunk{Content: text}, Meta: meta}),
	}
}

// wireOf is the case of a concrete type T, decoded with encoding/json.
func wireOf[T any](name string, v T) wireCase {
	return wireCase{name, v, func(b []byte) (any, error) {
		p := new(T)
		err := json.Unmarshal(b, p)
		return p, err
	}}
}

// fastPathCases are notifications the text-chunk fast path writes.
func fastPathCases() map[string]*SessionNotification {
	return map[string]*SessionNotification{
		"fast_agent_chunk":   {SessionID: "s", Update: &AgentMessageChunk{Content: TextBlock("a \"q\" é\n\t")}},
		"fast_thought_chunk": {SessionID: "s", Update: &AgentThoughtChunk{Content: TextBlock("t"), MessageID: "m"}},
		"fast_user_chunk":    {SessionID: "s", Update: &UserMessageChunk{Content: TextBlock("u")}},
	}
}

func readWireGolden(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "wire.golden"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		name, b, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			t.Fatalf("bad golden line %q", sc.Text())
		}
		out[name] = b
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestWireBytesOfGoValues marshals every union variant and every type
// with its own encoder from Go values, compares the bytes with
// testdata/wire.golden, then decodes those bytes and marshals them again
// to the same bytes.
func TestWireBytesOfGoValues(t *testing.T) {
	got := map[string]string{}
	var order []string
	for _, c := range wireCases() {
		b, err := json.Marshal(c.value)
		if err != nil {
			t.Fatalf("%s: marshal: %v", c.name, err)
		}
		got[c.name] = string(b)
		order = append(order, c.name)
	}
	for name, n := range fastPathCases() {
		b, err := MarshalSessionNotification(n)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got[name] = string(b)
		order = append(order, name)
	}
	if *updateWire {
		var buf bytes.Buffer
		for _, name := range order {
			fmt.Fprintf(&buf, "%s %s\n", name, got[name])
		}
		if err := os.WriteFile(filepath.Join("testdata", "wire.golden"), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := readWireGolden(t)
	if len(want) != len(got) {
		t.Errorf("golden has %d cases, the test %d", len(want), len(got))
	}
	for _, name := range order {
		if got[name] != want[name] {
			t.Errorf("%s:\nwant %s\ngot  %s", name, want[name], got[name])
		}
	}
	for _, c := range wireCases() {
		v, err := c.decode([]byte(want[c.name]))
		if err != nil {
			t.Errorf("%s: decode: %v", c.name, err)
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Errorf("%s: marshal decoded: %v", c.name, err)
			continue
		}
		if string(b) != want[c.name] {
			t.Errorf("%s: decoded and marshalled again:\nwant %s\ngot  %s", c.name, want[c.name], b)
		}
	}
	for name := range fastPathCases() {
		var back SessionNotification
		if err := json.Unmarshal([]byte(want[name]), &back); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b, _ := json.Marshal(&back); string(b) != want[name] {
			t.Errorf("%s: the generic encoder gives %s, the fast path %s", name, b, want[name])
		}
	}
}
