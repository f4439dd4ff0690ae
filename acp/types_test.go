package acp

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestUnionsDecodeToTheirVariant(t *testing.T) {
	tests := []struct {
		name string
		json string
		dec  func([]byte) (any, error)
		want string // %T of the result
	}{
		{"text block", `{"type":"text","text":"x"}`, anyDec(UnmarshalContentBlock), "*acp.TextContent"},
		{"embedded blob wins over text", `{"type":"resource","resource":{"uri":"u","blob":"AA","text":"t"}}`, anyDec(UnmarshalContentBlock), "*acp.EmbeddedResource"},
		{"stdio server without type", `{"name":"a","command":"/x","args":[],"env":[]}`, anyDec(UnmarshalMcpServer), "*acp.McpServerStdio"},
		{"stdio server with type stdio", `{"type":"stdio","name":"a","command":"/x","args":[],"env":[]}`, anyDec(UnmarshalMcpServer), "*acp.McpServerStdio"},
		{"http server", `{"type":"http","name":"a","url":"https://x","headers":[]}`, anyDec(UnmarshalMcpServer), "*acp.McpServerHTTP"},
		{"sse server", `{"type":"sse","name":"a","url":"https://x","headers":[]}`, anyDec(UnmarshalMcpServer), "*acp.McpServerSSE"},
		{"agent auth method", `{"id":"a","name":"A"}`, anyDec(UnmarshalAuthMethod), "*acp.AuthMethodAgent"},
		{"terminal auth method", `{"type":"terminal","id":"a","name":"A"}`, anyDec(UnmarshalAuthMethod), "*acp.AuthMethodTerminal"},
		{"selected outcome", `{"outcome":"selected","optionId":"o"}`, anyDec(UnmarshalRequestPermissionOutcome), "*acp.SelectedPermissionOutcome"},
		{"cancelled outcome", `{"outcome":"cancelled"}`, anyDec(UnmarshalRequestPermissionOutcome), "*acp.CancelledPermissionOutcome"},
		{"boolean config option", `{"type":"boolean","id":"y","name":"Y","currentValue":true}`, anyDec(UnmarshalSessionConfigOption), "*acp.BooleanConfigOption"},
		{"idle state", `{"state":"idle","stopReason":"cancelled"}`, anyDec(UnmarshalStateUpdate), "*acp.IdleState"},
		{"custom state kept", `{"state":"_x"}`, anyDec(UnmarshalStateUpdate), "*acp.OtherState"},
		{"session tool content", `{"type":"session","sessionId":"s"}`, anyDec(UnmarshalToolCallContent), "*acp.SessionReference"},
		{"subagent update", `{"sessionUpdate":"subagent_update","sessionId":"c"}`, anyDec(UnmarshalSessionUpdate), "*acp.SubagentUpdate"},
		{"unknown property schema kept", `{"type":"_color"}`, anyDec(UnmarshalElicitationPropertySchema), "*acp.UnknownPropertySchema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := tt.dec([]byte(tt.json))
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprintf("%T", v); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func anyDec[T any](dec func([]byte) (T, error)) func([]byte) (any, error) {
	return func(b []byte) (any, error) { return dec(b) }
}

func TestUnionDecodersNameTheUnknownTag(t *testing.T) {
	tests := []struct {
		name, json, want string
		dec              func([]byte) (any, error)
	}{
		{"content block", `{"type":"video"}`, `"video"`, anyDec(UnmarshalContentBlock)},
		{"session update", `{"sessionUpdate":"plan_update"}`, `"plan_update"`, anyDec(UnmarshalSessionUpdate)},
		{"tool call content", `{"type":"chart"}`, `"chart"`, anyDec(UnmarshalToolCallContent)},
		{"mcp server", `{"type":"acp","name":"x"}`, `"acp"`, anyDec(UnmarshalMcpServer)},
		{"auth method", `{"type":"oauth","id":"x","name":"y"}`, `"oauth"`, anyDec(UnmarshalAuthMethod)},
		{"permission outcome", `{"outcome":"maybe"}`, `"maybe"`, anyDec(UnmarshalRequestPermissionOutcome)},
		{"config option", `{"type":"slider","id":"x","name":"y"}`, `"slider"`, anyDec(UnmarshalSessionConfigOption)},
		{"missing tag", `{"text":"x"}`, `missing "type"`, anyDec(UnmarshalContentBlock)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.dec([]byte(tt.json))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %s", err, tt.want)
			}
		})
	}
}

func TestVariantsMarshalTheirTagWhateverTheReceiver(t *testing.T) {
	for _, v := range []any{AgentMessageChunk{Content: TextBlock("x")}, &AgentMessageChunk{Content: TextBlock("x")}} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}`; string(b) != want {
			t.Errorf("got %s, want %s", b, want)
		}
	}
}

func TestPermissionToolCallCarriesNoSessionUpdateTag(t *testing.T) {
	b, err := json.Marshal(&RequestPermissionRequest{SessionID: "s", ToolCall: ToolCallUpdate{ToolCallID: "t"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"sessionId":"s","toolCall":{"toolCallId":"t"},"options":[]}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}

func TestPatchHasThreeStates(t *testing.T) {
	var u SubagentUpdate
	if err := json.Unmarshal([]byte(`{"sessionId":"c","title":null,"description":"d"}`), &u); err != nil {
		t.Fatal(err)
	}
	if !u.Title.IsNull() || u.Title.IsSet() || u.Title.IsOmitted() {
		t.Errorf("title: want null, got %+v", u.Title)
	}
	if d, ok := u.Description.Get(); !ok || d != "d" {
		t.Errorf("description: want set to d, got %+v", u.Description)
	}
	if !u.Cwd.IsOmitted() {
		t.Errorf("cwd: want omitted, got %+v", u.Cwd)
	}
	u2 := SubagentUpdate{SessionID: "c", Title: Null[string](), State: Set[StateUpdate](&RunningState{}),
		AdditionalDirectories: Set([]string{})}
	b, err := json.Marshal(u2)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"sessionUpdate":"subagent_update","sessionId":"c","title":null,"state":{"state":"running"},"additionalDirectories":[]}`
	if string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}

func TestInitializeValidation(t *testing.T) {
	tests := []struct {
		name, params string
		ok           bool
	}{
		{"version 1", `{"protocolVersion":1}`, true},
		{"future version", `{"protocolVersion":999}`, true},
		{"version 0", `{"protocolVersion":0}`, true},
		{"missing version", `{}`, false},
		{"null version", `{"protocolVersion":null}`, false},
		{"string version", `{"protocolVersion":"1.0.0"}`, false},
		{"fractional version", `{"protocolVersion":1.5}`, false},
		{"too large version", `{"protocolVersion":65536}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := DecodeParams(json.RawMessage(tt.params), new(InitializeRequest))
			if tt.ok != (err == nil) {
				t.Fatalf("err = %v, want ok=%v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalidParams) {
				t.Fatalf("err = %v, want -32602", err)
			}
		})
	}
}

func TestRequestValidation(t *testing.T) {
	tests := []struct {
		name, params, field string
		p                   any
	}{
		{"session/new without cwd", `{"mcpServers":[]}`, "cwd", new(NewSessionRequest)},
		{"session/new without mcpServers", `{"cwd":"/x"}`, "mcpServers", new(NewSessionRequest)},
		{"session/new with a bad server", `{"cwd":"/x","mcpServers":[{"type":"ftp"}]}`, "mcpServers[0].type", new(NewSessionRequest)},
		{"session/new with a stdio server lacking command", `{"cwd":"/x","mcpServers":[{"name":"a","args":[],"env":[]}]}`, "mcpServers[0]", new(NewSessionRequest)},
		{"session/new with a null directory", `{"cwd":"/x","mcpServers":[],"additionalDirectories":["/a",null]}`, "additionalDirectories[1]", new(NewSessionRequest)},
		{"session/resume with a directory of the wrong type", `{"sessionId":"s","cwd":"/x","additionalDirectories":"/a"}`, "additionalDirectories", new(ResumeSessionRequest)},
		{"session/load without sessionId", `{"cwd":"/x","mcpServers":[]}`, "sessionId", new(LoadSessionRequest)},
		{"session/prompt without prompt", `{"sessionId":"s"}`, "prompt", new(PromptRequest)},
		{"session/prompt with a bad block", `{"sessionId":"s","prompt":[{"type":"video"}]}`, "prompt[0].type", new(PromptRequest)},
		{"set_config_option without value", `{"sessionId":"s","configId":"c"}`, "value", new(SetSessionConfigOptionRequest)},
		{"set_config_option boolean with string", `{"sessionId":"s","configId":"c","type":"boolean","value":"yes"}`, "value", new(SetSessionConfigOptionRequest)},
		{"authenticate without methodId", `{}`, "methodId", new(AuthenticateRequest)},
		{"permission without options", `{"sessionId":"s","toolCall":{"toolCallId":"t"}}`, "options", new(RequestPermissionRequest)},
		{"fs read with string line", `{"sessionId":"s","path":"/x","line":"1"}`, "line", new(ReadTextFileRequest)},
		{"elicitation with two scopes", `{"mode":"url","message":"m","sessionId":"s","requestId":1,"elicitationId":"e","url":"u"}`, "sessionId", new(CreateElicitationRequest)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := DecodeParams(json.RawMessage(tt.params), tt.p)
			var e *Error
			if !errors.As(err, &e) || e.Code != -32602 {
				t.Fatalf("err = %v, want -32602", err)
			}
			data, _ := e.Data.(map[string]any)
			if data["field"] != tt.field {
				t.Errorf("data = %v, want field %q", e.Data, tt.field)
			}
			// A connection's decoding of params its stream checked fails
			// the same way.
			fresh := reflect.New(reflect.TypeOf(tt.p).Elem()).Interface()
			if valid := DecodeValidParams(json.RawMessage(tt.params), fresh); !reflect.DeepEqual(valid, err) {
				t.Errorf("DecodeValidParams = %#v, DecodeParams = %#v", valid, err)
			}
		})
	}
}

func TestCapabilitiesAreDecodedLeniently(t *testing.T) {
	var r InitializeRequest
	in := `{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":"yes"},"terminal":"on","elicitation":{"form":{},"url":5},"subagents":7,"auth":{"terminal":true},"_meta":3}}`
	if err := json.Unmarshal([]byte(in), &r); err != nil {
		t.Fatal(err)
	}
	c := r.ClientCapabilities
	switch {
	case !c.FS.ReadTextFile || c.FS.WriteTextFile:
		t.Errorf("fs = %+v, want read only", c.FS)
	case c.Terminal:
		t.Error("a malformed terminal capability must be absent")
	case c.Elicitation.Form == nil || c.Elicitation.URL != nil:
		t.Errorf("elicitation = %+v, want form only", c.Elicitation)
	case c.Subagents != nil:
		t.Error("a malformed subagents capability must be absent")
	case !c.Auth.Terminal:
		t.Error("auth.terminal lost")
	}
	if err := json.Unmarshal([]byte(`{"protocolVersion":1,"clientCapabilities":"none"}`), &r); err != nil {
		t.Fatalf("a non-object capability set must be absent, got %v", err)
	}
}

func TestSubagentOptInIsAnyObject(t *testing.T) {
	for in, want := range map[string]bool{`{}`: false, `{"subagents":null}`: false, `{"subagents":{}}`: true, `{"subagents":{"_meta":{"x":1}}}`: true} {
		var c ClientCapabilities
		if err := json.Unmarshal([]byte(in), &c); err != nil {
			t.Fatal(err)
		}
		if got := c.Subagents != nil; got != want {
			t.Errorf("%s: opted in = %v, want %v", in, got, want)
		}
	}
}

func TestMalformedOptionalFieldsAreAbsent(t *testing.T) {
	var n SessionNotification
	in := `{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t","title":"T","kind":42,"content":[{"type":"chart"},{"type":"content","content":{"type":"text","text":"ok"}}],"locations":[{"path":"/x","line":"one"},{"path":"/y"}]},"_meta":[1]}`
	if err := json.Unmarshal([]byte(in), &n); err != nil {
		t.Fatal(err)
	}
	tc := n.Update.(*ToolCall)
	if tc.Kind != "" || len(tc.Content) != 1 || len(tc.Locations) != 1 || n.Meta != nil {
		t.Errorf("got %+v, want kind, the bad content item, the bad location and _meta dropped", tc)
	}
	var idle IdleState
	if err := json.Unmarshal([]byte(`{"state":"idle","stopReason":5,"usage":{"totalTokens":"x"}}`), &idle); err != nil {
		t.Fatal(err)
	}
	if idle.StopReason != "" || idle.Usage != nil {
		t.Errorf("got %+v, want stop reason and usage not reported", idle)
	}
}

func TestNullResultsDecodeAsEmpty(t *testing.T) {
	var r WriteTextFileResponse
	if err := json.Unmarshal([]byte(`null`), &r); err != nil {
		t.Fatalf("null result: %v", err)
	}
	b, _ := json.Marshal(&r)
	if string(b) != `{}` {
		t.Errorf("empty result marshals as %s, want {}", b)
	}
}

func TestEmptyRequiredListsMarshalAsArrays(t *testing.T) {
	for _, tt := range []struct {
		v    any
		want string
	}{
		{NewSessionRequest{Cwd: "/x"}, `{"cwd":"/x","mcpServers":[]}`},
		{InitializeResponse{ProtocolVersion: 1}, `{"protocolVersion":1,"authMethods":[]}`},
		{ListSessionsResponse{}, `{"sessions":[]}`},
		{&Plan{}, `{"sessionUpdate":"plan","entries":[]}`},
		{&McpServerStdio{Name: "a", Command: "/b"}, `{"name":"a","command":"/b","args":[],"env":[]}`},
		{PromptRequest{SessionID: "s", Prompt: []ContentBlock{TextBlock("hi")}}, `{"sessionId":"s","prompt":[{"type":"text","text":"hi"}]}`},
		{SetSessionConfigOptionRequest{SessionID: "s", ConfigID: "c", Value: BoolValue(false)}, `{"sessionId":"s","configId":"c","type":"boolean","value":false}`},
	} {
		b, err := json.Marshal(tt.v)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tt.want {
			t.Errorf("%T: got %s, want %s", tt.v, b, tt.want)
		}
	}
}

func TestErrorsMatchByCode(t *testing.T) {
	err := fmt.Errorf("loading: %w", ErrResourceNotFound.WithData(map[string]string{"sessionId": "s"}))
	if !errors.Is(err, ErrResourceNotFound) {
		t.Error("a wrapped -32002 with data does not match ErrResourceNotFound")
	}
	if errors.Is(err, ErrInvalidParams) {
		t.Error("-32002 matches -32602")
	}
	if ErrResourceNotFound.Data != nil {
		t.Error("WithData changed the sentinel")
	}
	if e := ErrInternal.Errorf("x %d", 1); e.Code != -32603 || e.Data != "x 1" {
		t.Errorf("Errorf = %+v", e)
	}
	if !errors.Is(ErrConnClosed, ErrConnClosed) {
		t.Error("ErrConnClosed does not match itself")
	}
}

func TestRequestIDKeepsItsJSONType(t *testing.T) {
	for in, want := range map[string]string{`7`: `7`, `"7"`: `"7"`, `null`: `null`, `-12`: `-12`, `"\u0037"`: `"7"`, `9223372036854775807`: `9223372036854775807`} {
		var id RequestID
		if err := json.Unmarshal([]byte(in), &id); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if id.String() != want {
			t.Errorf("%s: got %s, want %s", in, id, want)
		}
	}
	for _, bad := range []string{`1.5`, `1e3`, `{}`, `true`} {
		var id RequestID
		if err := json.Unmarshal([]byte(bad), &id); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}
