package subagent_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"

	"github.com/dshd/dshd/subagents"
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

// optionProvider takes the options keys, and refuses the value "bad".
type optionProvider struct {
	stubProvider
	keys []string
}

func (p optionProvider) OptionKeys() []string { return p.keys }

func (p optionProvider) CheckOptions(opts map[string]string) error {
	for k, v := range opts {
		if v == "bad" {
			return fmt.Errorf("%s=%s cannot work", k, v)
		}
	}
	return nil
}

func TestCheck_HoldsABindingToTheProvidersADaemonHas(t *testing.T) {
	svc := subagents.NewService(nil)
	for _, p := range []subagents.Provider{stubProvider{name: "spawn"}, optionProvider{stubProvider{name: "acp"}, []string{"command", "address"}}} {
		dispose, err := svc.RegisterProvider(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(dispose)
	}
	for _, tc := range []struct {
		binding string
		want    string // "" for no error, else substrings
	}{
		{"x=spawn,model=m,deny-permissions", ""},
		{"x=acp,command=codex-acp", ""},
		{"x=nonsense", `unknown provider "nonsense" (dshd has spawn, acp)`},
		{"x=spwan", `did you mean "spawn"?`},
		{"x=spawn,command=x", `unknown option "command" for provider spawn (it takes description, model, system-prompt, deny-permissions, tools, deny-tools, output-schema, max-depth, max-turns, max-tokens, background)`},
		{"x=spawn,tools=read_file", `tools: the spawn provider cannot restrict its children's tools (it lacks the toolFilter capability)`},
		{"x=acp,comand=y", `did you mean "command"?`},
		{"x=acp,address=bad", "address=bad cannot work"},
	} {
		b, err := subagent.ParseBinding(tc.binding)
		if err != nil {
			t.Fatalf("%s: %v", tc.binding, err)
		}
		err = subagent.Check(b, svc)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.binding, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.binding, err, tc.want)
		}
	}
}
