package subagent_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/dshd/dshd/subagents"
	st "github.com/dshd/dshd/subagents/subagenttest"
	"github.com/dshd/dshd/tools/subagent"
)

func TestParseBinding_ReadsTheOptionsAgentDefinitionsHave(t *testing.T) {
	schema := filepath.Join(t.TempDir(), "answer.json")
	if err := os.WriteFile(schema, []byte(`{"type":"object","required":["ok"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	in := "review=spawn,description=Reviews diffs.,tools=read_file|grep,deny-tools=run_command,output-schema=" + schema +
		",max-depth=0,max-turns=12,max-tokens=50000,system-prompt=You review in {{cwd}}."
	b, err := subagent.ParseBinding(in)
	if err != nil {
		t.Fatal(err)
	}
	if b.Description != "Reviews diffs." || b.Tools == nil || !slices.Equal(b.Tools.Allow, []string{"read_file", "grep"}) ||
		!slices.Equal(b.Tools.Deny, []string{"run_command"}) || string(b.OutputSchema) != `{"type":"object","required":["ok"]}` ||
		b.OutputSchemaFile != schema || b.MaxDepth == nil || *b.MaxDepth != 0 ||
		b.Budget != (subagents.Budget{MaxTurns: 12, MaxTokens: 50000}) || b.AgentOptions.SystemPrompt != "You review in {{cwd}}." {
		t.Fatalf("ParseBinding = %+v", b)
	}
	again, err := subagent.ParseBinding(b.String())
	if err != nil || !reflect.DeepEqual(again, b) {
		t.Fatalf("String does not round-trip: %q → %+v (%v)", b.String(), again, err)
	}
}

func TestParseBinding_RejectsBadOptionValues(t *testing.T) {
	notJSON := filepath.Join(t.TempDir(), "x.json")
	os.WriteFile(notJSON, []byte("{nope"), 0o600)
	for in, want := range map[string]string{
		"a=spawn,tools=":                   "want tool names separated by |",
		"a=spawn,tools=read_file||grep":    "want tool names separated by |",
		"a=spawn,max-turns=0":              "max-turns=\"0\": want a whole number from 1",
		"a=spawn,max-tokens=lots":          "max-tokens=\"lots\": want a whole number from 1",
		"a=spawn,max-depth=-1":             "max-depth=\"-1\": want a whole number from 0",
		"a=spawn,output-schema=":           "want the path of a JSON Schema file",
		"a=spawn,description=":             `description="": want the tool's description`,
		"a=spawn,model= ":                  `model=" ": want a model id`,
		"a=spawn,system-prompt":            `system-prompt="": want the child's system prompt`,
		"a=spawn,output-schema=/no/such":   "no such file",
		"a=spawn,output-schema=" + notJSON: "the file is not JSON",
	} {
		t.Run(in, func(t *testing.T) {
			if _, err := subagent.ParseBinding(in); err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("err = %v, want %q", err, want)
			}
		})
	}
}

// capProvider declares the given start-time capabilities.
type capProvider struct {
	stubProvider
	caps subagents.Capabilities
}

func (p capProvider) Capabilities() subagents.Capabilities { return p.caps }

func TestCheck_NamesTheOptionAndTheCapabilityAProviderLacks(t *testing.T) {
	svc := subagents.NewService(nil)
	for _, p := range []subagents.Provider{capProvider{stubProvider{name: "remote"}, subagents.Capabilities{}},
		capProvider{stubProvider{name: "local"}, subagents.Capabilities{ToolFilter: true, OutputSchema: true, DepthLimit: true}}} {
		dispose, err := svc.RegisterProvider(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(dispose)
	}
	for _, tc := range []struct {
		b               subagent.Binding
		key, capability string
		want            string
	}{
		{subagent.Binding{Provider: "remote", Tools: &subagents.ToolFilter{Allow: []string{"grep"}}}, "tools", "toolFilter",
			"tools: the remote provider cannot restrict its children's tools (it lacks the toolFilter capability)"},
		{subagent.Binding{Provider: "remote", Tools: &subagents.ToolFilter{Deny: []string{"grep"}}}, "deny-tools", "toolFilter", "deny-tools: the remote provider"},
		{subagent.Binding{Provider: "remote", OutputSchema: []byte(`{}`)}, "output-schema", "outputSchema", "cannot validate its children's answers"},
		{subagent.Binding{Provider: "remote", MaxDepth: new(int)}, "max-depth", "depthLimit", "cannot limit how deep its children delegate"},
		{subagent.Binding{Provider: "local", OutputSchema: []byte(`{"type": 7}`)}, "output-schema", "outputSchema", "not a JSON Schema"},
		{subagent.Binding{Provider: "local", AgentOptions: subagent.AgentOptions{SystemPrompt: "Work in {{cwd}} on {{ticket}}."}}, "system-prompt", "", `unknown variable "ticket"`},
		{subagent.Binding{Provider: "local", AgentOptions: subagent.AgentOptions{SystemPrompt: "Use {{ model }}."}}, "system-prompt", "", "malformed"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			for range 2 { // the second time from the verdicts kept
				err := subagent.Check(tc.b, svc)
				oe, ok := err.(*subagent.OptionError)
				if !ok || oe.Key != tc.key || oe.Capability != tc.capability || oe.Provider != tc.b.Provider || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("Check = %#v (%v), want key %q capability %q and %q", err, err, tc.key, tc.capability, tc.want)
				}
			}
		})
	}
	ok := subagent.Binding{Provider: "local", Tools: &subagents.ToolFilter{Allow: []string{"grep"}}, OutputSchema: []byte(`{"type":"object"}`),
		MaxDepth: new(int), AgentOptions: subagent.AgentOptions{SystemPrompt: "In {{cwd}} with {{model}}. {{permissions}}"}}
	if err := subagent.Check(ok, svc); err != nil {
		t.Fatalf("a binding the provider can serve: %v", err)
	}
}

func TestCheckTools_ReportsAToolThatDoesNotExistAndLeavesMCPToolsToTheSession(t *testing.T) {
	names := []string{"grep", "read_file", "run_command"}
	b := subagent.Binding{Provider: "spawn", Tools: &subagents.ToolFilter{Allow: []string{"read_file", "mcp__db__query"}, Deny: []string{"run_comand"}}}
	err := subagent.CheckTools(b, names)
	if oe, ok := err.(*subagent.OptionError); !ok || oe.Key != "deny-tools" || !strings.Contains(err.Error(), `there is no tool named "run_comand"; did you mean "run_command"?`) {
		t.Fatalf("CheckTools = %v", err)
	}
	b.Tools.Deny = nil
	if err := subagent.CheckTools(b, names); err != nil {
		t.Fatalf("an MCP tool name is the session's to check: %v", err)
	}
}

func TestDescription_TheBindingsDescriptionHeadsTheDerivedWording(t *testing.T) {
	p := world(t, st.ParentOptions{}, subagent.Binding{Provider: "spawn", ToolName: "reviewer", Description: "Reviews a diff for bugs; read-only."},
		subagent.Binding{Provider: "fork", ToolName: "plain"})
	rev, _ := p.Tools.Get("reviewer")
	plain, _ := p.Tools.Get("plain")
	if !strings.HasPrefix(rev.Description(), "Reviews a diff for bugs; read-only.\n\n") || !strings.Contains(rev.Description(), "does not see this conversation") {
		t.Fatalf("description = %q", rev.Description())
	}
	if strings.Contains(plain.Description(), "Reviews") {
		t.Fatalf("a binding without a description got another's head: %q", plain.Description())
	}
}

func TestExecute_TheBindingsFilterSchemaDepthAndBudgetReachTheStartRequest(t *testing.T) {
	prov := &capRecorder{recordingProvider: &recordingProvider{name: "rec", res: subagents.Result{StopReason: subagents.StopCompleted, Structured: []byte(`{"ok":true}`)}}}
	p := st.NewParent(t, st.ParentOptions{})
	p.Service.RegisterProvider(prov)
	two := 2
	d, err := subagent.Bind(p.Service, p.Tools, subagent.Binding{Provider: "rec", ToolName: "typed",
		Tools: &subagents.ToolFilter{Allow: []string{"grep"}}, OutputSchema: []byte(`{"type":"object"}`), MaxDepth: &two,
		Budget: subagents.Budget{MaxTurns: 3, MaxTokens: 900}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d()
	res := call(t, t.Context(), p, "typed", "d", "p", nil)
	if res.IsError || res.Output != `{"ok":true}` {
		t.Fatalf("the tool result must carry the structured answer: %+v", res)
	}
	req := prov.reqs[0]
	if req.ToolFilter == nil || !slices.Equal(req.ToolFilter.Allow, []string{"grep"}) || string(req.OutputSchema) != `{"type":"object"}` ||
		req.DepthLimit == nil || *req.DepthLimit != 2 || req.Budget != (subagents.Budget{MaxTurns: 3, MaxTokens: 900}) {
		t.Fatalf("request = %+v", req)
	}
}

// capRecorder is a recordingProvider that declares every start-time
// capability, so the service lets the binding's needs through.
type capRecorder struct{ *recordingProvider }

func (capRecorder) Capabilities() subagents.Capabilities {
	return subagents.Capabilities{ToolFilter: true, OutputSchema: true, DepthLimit: true}
}

func (p capRecorder) Start(ctx context.Context, req subagents.StartRequest) (subagents.Run, error) {
	return p.recordingProvider.Start(ctx, req)
}

func TestDescribe_ListsEachAgentWithItsProviderPurposeAndTools(t *testing.T) {
	p := world(t, st.ParentOptions{}, subagent.Binding{Provider: "spawn", ToolName: "reviewer", Description: "Reviews diffs.",
		Tools: &subagents.ToolFilter{Allow: []string{"read_file", "grep"}}, DenyPermissions: true}, subagent.Binding{Provider: "fork", ToolName: "subagent_fork"})
	bs := subagent.Bindings(p.Tools.Tools())
	got := subagent.Describe(bs)
	for _, want := range []string{"- reviewer (provider spawn): Reviews diffs.\n  tools: read_file, grep\n  permissions: denied", "- subagent_fork (provider fork)\n  tools: the parent's"} {
		if !strings.Contains(got, want) {
			t.Fatalf("Describe = %q, want %q in it", got, want)
		}
	}
}
