package acp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// schemaDir holds the official schema.json and schema.unstable.json of
// @agentclientprotocol/sdk 2.4.0, which `make npm` installs for the interop
// tests; they are not vendored, so the test skips without them. Override
// with ACP_SCHEMA_DIR.
func schemaDir() string {
	if d := os.Getenv("ACP_SCHEMA_DIR"); d != "" {
		return d
	}
	return "../conformance/interop/node_modules/@agentclientprotocol/sdk/schema/v1"
}

// goldenDefs maps golden files to the schema definition they must satisfy;
// files not listed by prefix are matched in defFor.
var goldenDefs = map[string]string{
	"initialize_request":                    "InitializeRequest",
	"initialize_request_full":               "InitializeRequest",
	"initialize_response":                   "InitializeResponse",
	"initialize_response_minimal":           "InitializeResponse",
	"initialize_response_auth":              "InitializeResponse",
	"initialize_request_session_caps":       "InitializeRequest",
	"authenticate_request":                  "AuthenticateRequest",
	"empty_response":                        "AuthenticateResponse",
	"empty_response_meta":                   "LogoutResponse",
	"session_new_request":                   "NewSessionRequest",
	"session_new_request_minimal":           "NewSessionRequest",
	"session_new_response":                  "NewSessionResponse",
	"session_load_request":                  "LoadSessionRequest",
	"session_load_response":                 "LoadSessionResponse",
	"session_resume_request":                "ResumeSessionRequest",
	"session_close_request":                 "CloseSessionRequest",
	"session_list_request":                  "ListSessionsRequest",
	"session_list_response":                 "ListSessionsResponse",
	"session_list_response_empty":           "ListSessionsResponse",
	"session_delete_request":                "DeleteSessionRequest",
	"set_mode_request":                      "SetSessionModeRequest",
	"set_config_option_request_select":      "SetSessionConfigOptionRequest",
	"set_config_option_request_boolean":     "SetSessionConfigOptionRequest",
	"set_config_option_response":            "SetSessionConfigOptionResponse",
	"prompt_request":                        "PromptRequest",
	"prompt_response":                       "PromptResponse",
	"cancel_notification":                   "CancelNotification",
	"cancel_request_int":                    "CancelRequestNotification",
	"cancel_request_string":                 "CancelRequestNotification",
	"cancel_request_negative":               "CancelRequestNotification",
	"request_permission_request":            "RequestPermissionRequest",
	"request_permission_response_selected":  "RequestPermissionResponse",
	"request_permission_response_cancelled": "RequestPermissionResponse",
	"fs_read_request":                       "ReadTextFileRequest",
	"fs_read_response":                      "ReadTextFileResponse",
	"fs_write_request":                      "WriteTextFileRequest",
	"terminal_create_request":               "CreateTerminalRequest",
	"terminal_create_response":              "CreateTerminalResponse",
	"terminal_request":                      "TerminalOutputRequest",
	"terminal_output_response":              "TerminalOutputResponse",
	"terminal_output_response_running":      "TerminalOutputResponse",
	"terminal_wait_response":                "WaitForTerminalExitResponse",
	"elicitation_create_form":               "CreateElicitationRequest",
	"elicitation_create_url":                "CreateElicitationRequest",
	"elicitation_response_accept":           "CreateElicitationResponse",
	"elicitation_response_decline":          "CreateElicitationResponse",
	"elicitation_complete":                  "CompleteElicitationNotification",
	"error_resource_not_found":              "Error",
}

// defFor returns the definition for a golden file and whether it needs the
// unstable schema (subagent shapes); "" means no schema has the shape (the
// `session` tool-call content is stabilized but in neither file).
func defFor(name string) (def string, unstable bool) {
	switch {
	case strings.Contains(name, "session_link"), name == "toolcontent_session":
		return "", false
	case strings.HasPrefix(name, "update_subagent"), strings.HasPrefix(name, "update_session_message"):
		return "SessionNotification", true
	case name == "prompt_response_usage":
		return "PromptResponse", true
	case name == "initialize_response_fork":
		return "InitializeResponse", true
	case strings.HasPrefix(name, "session_fork_request"):
		return "ForkSessionRequest", true
	case name == "session_fork_response":
		return "ForkSessionResponse", true
	case strings.HasPrefix(name, "update_"):
		return "SessionNotification", false
	case strings.HasPrefix(name, "content_"):
		return "ContentBlock", false
	case strings.HasPrefix(name, "toolcontent_"):
		return "ToolCallContent", false
	}
	return goldenDefs[name], false
}

// schemaDefs returns the raw $defs of an official schema file.
func schemaDefs(t *testing.T, file string) map[string]json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(schemaDir(), file))
	if err != nil {
		t.Skipf("official schema not available: %v", err)
	}
	var doc struct {
		Defs map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Defs
}

var refRE = regexp.MustCompile(`"#/\$defs/([A-Za-z0-9_]+)"`)

// resolveDef resolves one definition with only the definitions it reaches:
// resolving the whole file per case is slow.
func resolveDef(t *testing.T, defs map[string]json.RawMessage, def string) *jsonschema.Resolved {
	t.Helper()
	need := map[string]json.RawMessage{}
	todo := []string{def}
	for len(todo) > 0 {
		n := todo[0]
		todo = todo[1:]
		if _, seen := need[n]; seen {
			continue
		}
		raw, ok := defs[n]
		if !ok {
			t.Fatalf("schema has no definition %s", n)
		}
		need[n] = raw
		for _, m := range refRE.FindAllSubmatch(raw, -1) {
			todo = append(todo, string(m[1]))
		}
	}
	doc, err := json.Marshal(map[string]any{"$ref": "#/$defs/" + def, "$defs": need})
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(doc, &s); err != nil {
		t.Fatal(err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestGoldenFilesValidateAgainstTheOfficialSchema(t *testing.T) {
	stable := schemaDefs(t, "schema.json")
	unstable := schemaDefs(t, "schema.unstable.json")
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		def      string
		unstable bool
	}
	cache := map[key]*jsonschema.Resolved{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			def, useUnstable := defFor(name)
			if def == "" {
				t.Skip("shape not in the 2.4.0 schema files")
			}
			r := cache[key{def, useUnstable}]
			if r == nil {
				defs := stable
				if useUnstable {
					defs = unstable
				}
				r = resolveDef(t, defs, def)
				cache[key{def, useUnstable}] = r
			}
			var inst any
			if err := json.Unmarshal(readGolden(t, name), &inst); err != nil {
				t.Fatal(err)
			}
			if err := r.Validate(inst); err != nil {
				t.Errorf("%s does not validate as %s: %v", name, def, err)
			}
		})
	}
}

func TestTheSchemaCheckRejectsAWrongUpdate(t *testing.T) {
	defs := schemaDefs(t, "schema.json")
	r := resolveDef(t, defs, "SessionNotification")
	var inst any
	// acp-v1 §24 mistake 1: modeId instead of currentModeId.
	if err := json.Unmarshal([]byte(`{"sessionId":"s","update":{"sessionUpdate":"current_mode_update","modeId":"x"}}`), &inst); err != nil {
		t.Fatal(err)
	}
	if err := r.Validate(inst); err == nil {
		t.Fatal("a current_mode_update without currentModeId validated")
	}
}
