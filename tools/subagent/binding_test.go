package subagent_test

import (
	"encoding/json"
	"maps"
	"reflect"
	"strings"
	"testing"

	"github.com/dshd/dshd/tools/subagent"
)

func TestParseBinding_ReadsTheFlagSyntax(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want subagent.Binding
	}{
		{"a name and a provider", "subagent=spawn", subagent.Binding{ToolName: "subagent", Provider: "spawn"}},
		{"a model option", "reviewer=fork,model=deepseek-pro", subagent.Binding{ToolName: "reviewer", Provider: "fork", AgentOptions: subagent.AgentOptions{Model: "deepseek-pro"}}},
		{"a system prompt and bare deny-permissions", "ro=spawn,system-prompt=Read only.,deny-permissions",
			subagent.Binding{ToolName: "ro", Provider: "spawn", AgentOptions: subagent.AgentOptions{SystemPrompt: "Read only."}, DenyPermissions: true}},
		{"deny-permissions with a value", "ro=spawn,deny-permissions=false", subagent.Binding{ToolName: "ro", Provider: "spawn"}},
		{"provider-specific options pass through", "subagent_acp=acp,command=dshd serve,socket=/tmp/x.sock",
			subagent.Binding{ToolName: "subagent_acp", Provider: "acp", Options: map[string]string{"command": "dshd serve", "socket": "/tmp/x.sock"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := subagent.ParseBinding(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got.ToolName != tc.want.ToolName || got.Provider != tc.want.Provider || got.AgentOptions != tc.want.AgentOptions ||
				got.DenyPermissions != tc.want.DenyPermissions || !maps.Equal(got.Options, tc.want.Options) {
				t.Fatalf("ParseBinding = %+v, want %+v", got, tc.want)
			}
			again, err := subagent.ParseBinding(got.String())
			if err != nil || !reflect.DeepEqual(again, got) {
				t.Fatalf("String does not round-trip: %q → %+v (%v)", got.String(), again, err)
			}
		})
	}
}

func TestParseBinding_RejectsMalformedFlags(t *testing.T) {
	for _, in := range []string{"", "subagent", "=spawn", "subagent=", "bad name=spawn", "a=spawn,model=x,model=y", "a=spawn,,model=x", "a=spawn,deny-permissions=maybe"} {
		t.Run(in, func(t *testing.T) {
			if b, err := subagent.ParseBinding(in); err == nil {
				t.Fatalf("ParseBinding(%q) = %+v, want an error", in, b)
			}
		})
	}
}

func TestDefaultBindings_AreSubagentOnSpawnAndSubagentForkOnFork(t *testing.T) {
	got := subagent.DefaultBindings()
	if len(got) != 2 || got[0].ToolName != "subagent" || got[0].Provider != "spawn" || got[1].ToolName != "subagent_fork" || got[1].Provider != "fork" {
		t.Fatalf("DefaultBindings = %+v", got)
	}
}

// schemaOf decodes a tool's input schema.
func schemaOf(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func contains(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
