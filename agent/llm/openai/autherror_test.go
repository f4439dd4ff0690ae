package openai

import (
	"strings"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
)

// A 401 says where the key came from (or that none was sent) and keeps
// the server's own reason, with the key taken out of it.
func TestUnauthorized_NamesTheKeysSourceAndKeepsTheServersReason(t *testing.T) {
	const key = "sk-wrong-key-0123456789"
	refused := openaitest.Reply{Status: 401, Error: &openaitest.Error{
		Message: "Incorrect API key provided: " + key + " (FAKE-REASON-401); also " + key[:12] + "…",
		Type:    "invalid_request_error", Code: "invalid_api_key"}}
	for _, tc := range []struct {
		name      string
		key       APIKey
		source    string
		want      []string
		leaksNone bool
	}{
		{"a key from a variable", key, "DEEPSEEK_API_KEY",
			[]string{"the server refused the API key from DEEPSEEK_API_KEY", "FAKE-REASON-401", "Incorrect API key provided"}, true},
		{"no key sent", "", `--api-key-env is ""`,
			[]string{"no API key was sent (--api-key-env is \"\")", "FAKE-REASON-401"}, false},
		{"a key of unknown source", key, "",
			[]string{"the server refused the API key", "FAKE-REASON-401"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(o *Options) { o.APIKey, o.KeySource = tc.key, tc.source })
			h.srv.Enqueue(refused)
			_, err := h.run(t.Context(), userReq("hi"))
			e := apiError(t, err)
			if e.Status != 401 || e.Retryable() {
				t.Fatalf("status %d retryable %v, want 401 not retryable", e.Status, e.Retryable())
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if tc.leaksNone && (strings.Contains(err.Error(), key[:12]) || strings.Contains(e.Body, key)) {
				t.Errorf("the error quotes the key: %q", err)
			}
		})
	}
}
