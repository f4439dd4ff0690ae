// End-to-end test of a key the model server refuses (HTTP 401): dshd
// prompt's failure names where the key came from, or that none was sent,
// and keeps the server's reason without the key.

package main

import (
	"strings"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
)

func TestARefusedKeyNamesItsVariableAndKeepsTheServersReason(t *testing.T) {
	const key = "sk-wrong-0123456789"
	refused := openaitest.Reply{Status: 401, Error: &openaitest.Error{
		Message: "Incorrect API key provided: " + key + " (FAKE-REASON-401)", Type: "invalid_request_error", Code: "invalid_api_key"}}
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want []string
	}{
		{"a key from the backend's variable", []string{"DEEPSEEK_API_KEY=" + key}, []string{"--backend", "deepseek"},
			[]string{"the server refused the API key from DEEPSEEK_API_KEY", "FAKE-REASON-401"}},
		{"a key from the variable --api-key-env names", []string{"MY_MODEL_KEY=" + key}, []string{"--api-key-env", "MY_MODEL_KEY", "--model", "m"},
			[]string{"the server refused the API key from MY_MODEL_KEY", "FAKE-REASON-401"}},
		{"no key at all", nil, []string{"--api-key-env", "", "--model", "m"},
			[]string{`no API key was sent (--api-key-env is "")`, "FAKE-REASON-401"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := fakeModel(t)
			srv.Enqueue(refused)
			args := append([]string{"prompt", "--model-url", srv.URL(), "--state-dir", t.TempDir(), "--cwd", t.TempDir()}, tc.args...)
			code, stdout, stderr := runDshd(t, tc.env, append(args, "hi")...)
			if code != 1 || stdout != "" {
				t.Fatalf("exit %d, stdout %q, want 1 and nothing; stderr:\n%s", code, stdout, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if tc.env != nil && strings.Contains(stderr, key) {
				t.Errorf("stderr quotes the key:\n%s", stderr)
			}
		})
	}
}
