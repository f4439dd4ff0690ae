package openai

import (
	"strings"
	"testing"
)

func TestPresetFor_ANamedBackendKeepsItsBehaviourBehindAnyURL(t *testing.T) {
	for _, tc := range []struct {
		name, url  string
		wantKeyEnv string
		wantEcho   bool
		wantThink  ThinkingStyle
		wantURL    string
	}{
		{"deepseek", "http://127.0.0.1:9999/v1", "DEEPSEEK_API_KEY", true, ThinkingObject, "http://127.0.0.1:9999/v1"},
		{"deepseek", "https://gateway.example.com/deepseek", "DEEPSEEK_API_KEY", true, ThinkingObject, "https://gateway.example.com/deepseek"},
		{"deepseek", "", "DEEPSEEK_API_KEY", true, ThinkingObject, DefaultBaseURL},
		{"openai", "http://proxy:8080/v1", "OPENAI_API_KEY", false, ThinkingEffort, "http://proxy:8080/v1"},
		{"ollama", "", "", false, ThinkingNone, "http://localhost:11434/v1"},
		// Without a name, only DeepSeek's own host is DeepSeek.
		{"", "", "DEEPSEEK_API_KEY", true, ThinkingObject, DefaultBaseURL},
		{"", "https://api.deepseek.com/beta", "DEEPSEEK_API_KEY", true, ThinkingObject, "https://api.deepseek.com/beta"},
		{"", "http://localhost:8000/v1", "", false, ThinkingNone, "http://localhost:8000/v1"},
		{"", "http://proxy/api.deepseek.com", "", false, ThinkingNone, "http://proxy/api.deepseek.com"},
	} {
		opts, keyEnv, err := PresetFor(tc.name, tc.url)
		if err != nil {
			t.Fatalf("PresetFor(%q, %q): %v", tc.name, tc.url, err)
		}
		if keyEnv != tc.wantKeyEnv || opts.Compat.EchoReasoning != tc.wantEcho || opts.Compat.Thinking != tc.wantThink || opts.BaseURL != tc.wantURL {
			t.Errorf("PresetFor(%q, %q) = key %q, echo %v, thinking %v, URL %q; want %q, %v, %v, %q",
				tc.name, tc.url, keyEnv, opts.Compat.EchoReasoning, opts.Compat.Thinking, opts.BaseURL,
				tc.wantKeyEnv, tc.wantEcho, tc.wantThink, tc.wantURL)
		}
	}
}

func TestPresetFor_RefusesAnUnknownBackendAndAGenericOneWithoutAURL(t *testing.T) {
	if _, _, err := PresetFor("deepsek", ""); err == nil || !strings.Contains(err.Error(), "deepsek") {
		t.Errorf("unknown backend: %v", err)
	}
	if _, _, err := PresetFor(GenericPreset, ""); err == nil {
		t.Errorf("a generic backend without a URL was accepted")
	}
	if names := PresetNames(); len(names) != len(presets) || names[0] != "deepseek" {
		t.Errorf("PresetNames = %v", names)
	}
}
