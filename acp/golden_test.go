package acp

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// decoder decodes one golden file into the value to marshal back.
type decoder func([]byte) (any, error)

func as[T any]() decoder {
	return func(b []byte) (any, error) {
		v := new(T)
		err := json.Unmarshal(b, v)
		return v, err
	}
}

func union[T any](dec func([]byte) (T, error)) decoder {
	return func(b []byte) (any, error) { return dec(b) }
}

// goldens maps each file of testdata/golden to the type it holds.
var goldens = map[string]decoder{
	"content_text":                  union(UnmarshalContentBlock),
	"content_text_annotations":      union(UnmarshalContentBlock),
	"content_image":                 union(UnmarshalContentBlock),
	"content_audio":                 union(UnmarshalContentBlock),
	"content_resource_link":         union(UnmarshalContentBlock),
	"content_resource_text":         union(UnmarshalContentBlock),
	"content_resource_blob":         union(UnmarshalContentBlock),
	"toolcontent_content":           union(UnmarshalToolCallContent),
	"toolcontent_diff":              union(UnmarshalToolCallContent),
	"toolcontent_diff_new_file":     union(UnmarshalToolCallContent),
	"toolcontent_diff_emptied_file": union(UnmarshalToolCallContent),
	"toolcontent_terminal":          union(UnmarshalToolCallContent),
	"toolcontent_session":           union(UnmarshalToolCallContent),

	"initialize_request":              as[InitializeRequest](),
	"initialize_request_full":         as[InitializeRequest](),
	"initialize_response":             as[InitializeResponse](),
	"initialize_response_minimal":     as[InitializeResponse](),
	"initialize_response_auth":        as[InitializeResponse](),
	"initialize_response_fork":        as[InitializeResponse](),
	"initialize_request_session_caps": as[InitializeRequest](),
	"authenticate_request":            as[AuthenticateRequest](),
	"empty_response":                  as[AuthenticateResponse](),
	"empty_response_meta":             as[LogoutResponse](),

	"session_new_request":               as[NewSessionRequest](),
	"session_new_request_minimal":       as[NewSessionRequest](),
	"session_new_response":              as[NewSessionResponse](),
	"session_load_request":              as[LoadSessionRequest](),
	"session_load_response":             as[LoadSessionResponse](),
	"session_resume_request":            as[ResumeSessionRequest](),
	"session_close_request":             as[CloseSessionRequest](),
	"session_list_request":              as[ListSessionsRequest](),
	"session_list_response":             as[ListSessionsResponse](),
	"session_list_response_empty":       as[ListSessionsResponse](),
	"session_delete_request":            as[DeleteSessionRequest](),
	"set_mode_request":                  as[SetSessionModeRequest](),
	"set_config_option_request_select":  as[SetSessionConfigOptionRequest](),
	"set_config_option_request_boolean": as[SetSessionConfigOptionRequest](),
	"set_config_option_response":        as[SetSessionConfigOptionResponse](),

	"prompt_request":               as[PromptRequest](),
	"prompt_response":              as[PromptResponse](),
	"prompt_response_usage":        as[PromptResponse](),
	"session_fork_request":         as[ForkSessionRequest](),
	"session_fork_request_minimal": as[ForkSessionRequest](),
	"session_fork_response":        as[ForkSessionResponse](),
	"cancel_notification":          as[CancelNotification](),
	"cancel_request_int":           as[CancelRequestNotification](),
	"cancel_request_string":        as[CancelRequestNotification](),
	"cancel_request_negative":      as[CancelRequestNotification](),

	"request_permission_request":            as[RequestPermissionRequest](),
	"request_permission_response_selected":  as[RequestPermissionResponse](),
	"request_permission_response_cancelled": as[RequestPermissionResponse](),

	"fs_read_request":                  as[ReadTextFileRequest](),
	"fs_read_response":                 as[ReadTextFileResponse](),
	"fs_write_request":                 as[WriteTextFileRequest](),
	"terminal_create_request":          as[CreateTerminalRequest](),
	"terminal_create_response":         as[CreateTerminalResponse](),
	"terminal_request":                 as[TerminalRequest](),
	"terminal_output_response":         as[TerminalOutputResponse](),
	"terminal_output_response_running": as[TerminalOutputResponse](),
	"terminal_wait_response":           as[WaitForTerminalExitResponse](),

	"elicitation_create_form":      as[CreateElicitationRequest](),
	"elicitation_create_url":       as[CreateElicitationRequest](),
	"elicitation_response_accept":  as[CreateElicitationResponse](),
	"elicitation_response_decline": as[CreateElicitationResponse](),
	"elicitation_complete":         as[CompleteElicitationNotification](),

	"error_resource_not_found": as[Error](),
}

func goldenDecoder(name string) (decoder, bool) {
	if strings.HasPrefix(name, "update_") {
		return as[SessionNotification](), true
	}
	d, ok := goldens[name]
	return d, ok
}

func readGolden(t *testing.T, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "golden", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestGoldenRoundTrip(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 90 {
		t.Fatalf("found %d golden files, want at least 90", len(files))
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			dec, ok := goldenDecoder(name)
			if !ok {
				t.Fatalf("no decoder registered for %s", name)
			}
			want := readGolden(t, name)
			v, err := dec(want)
			if err != nil {
				t.Fatalf("unmarshal: %v", err)
			}
			if val, ok := v.(validator); ok && strings.Contains(name, "request") {
				if err := val.Validate(); err != nil {
					t.Errorf("Validate: %v", err)
				}
			}
			got, err := json.Marshal(v)
			if err != nil {
				t.Fatalf("marshal: %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("round trip mismatch\nwant %s\ngot  %s", want, got)
			}
		})
	}
}
