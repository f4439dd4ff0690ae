package definition_test

import (
	"strings"
	"testing"

	"github.com/dshd/dshd/subagents/definition"
)

func TestCheckAll_RejectsWhatTheProviderOrTheToolsCannotMeet(t *testing.T) {
	d := newDaemon(t)
	env := definition.Env{Service: d.svc, Tools: d.base.Names(), Models: func() []string { return []string{"deepseek-chat", "deepseek-reasoner"} }}
	for _, tc := range []struct {
		name, text           string
		line                 int
		key, provider, capab string
		want                 string
	}{
		{"a tool filter on an acp child", "---\ndescription: d\nprovider: acp\nagent: codex\ntools: read_file\n---\n", 5, "tools", "acp", "toolFilter",
			"tools: the acp provider cannot restrict its children's tools (it lacks the toolFilter capability)"},
		{"an unknown provider", "---\ndescription: d\nprovider: spwan\n---\n", 3, "provider", "spwan", "", `did you mean "spawn"?`},
		{"an unknown named agent", "---\ndescription: d\nprovider: acp\nagent: codx\n---\n", 4, "agent", "acp", "", `no agent named "codx" is configured`},
		{"a schema that is not one", "---\ndescription: d\noutputSchema:\n  type: 12\n---\n", 3, "outputSchema", "spawn", "outputSchema", "not a JSON Schema"},
		{"an unknown tool", "---\ndescription: d\ntools: [read_file, grpe]\n---\n", 3, "tools", "spawn", "", `there is no tool named "grpe"; did you mean "grep"?`},
		{"an unknown variable in the body", "---\ndescription: d\n---\n\nYou work in {{cwd}}.\nTicket: {{ticket}}\n", 6, "body", "spawn", "", `unknown variable "ticket"`},
		{"a name another tool has", "---\nname: grep\ndescription: d\n---\n", 2, "name", "", "", `the name "grep" is taken by another tool`},
		{"a model the backend does not serve", "---\ndescription: d\nmodel: sonnet\n---\n", 3, "model", "", "", `the backend does not serve "sonnet" (it serves deepseek-chat, deepseek-reasoner); use model: inherit`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			def, err := parse(t, "x.md", tc.text, definition.DSHD)
			if err != nil {
				t.Fatal(err)
			}
			ok, errs := definition.CheckAll([]*definition.Definition{def}, env)
			if len(ok) != 0 || len(errs) != 1 {
				t.Fatalf("ok %d, errs %v", len(ok), errs)
			}
			e := errs[0]
			if e.Line != tc.line || e.Key != tc.key || e.Provider != tc.provider || e.Capability != tc.capab || !strings.Contains(e.Error(), tc.want) {
				t.Fatalf("err = %q (line %d key %q provider %q capability %q)", e, e.Line, e.Key, e.Provider, e.Capability)
			}
		})
	}
}

func TestCheckAll_AFilterMayNameAnotherDefinitionButNotARejectedOne(t *testing.T) {
	d := newDaemon(t)
	env := definition.Env{Service: d.svc, Tools: d.base.Names()}
	lead, _ := parse(t, "lead.md", "---\ndescription: d\ntools: [read_file, helper, broken]\n---\n", definition.DSHD)
	helper, _ := parse(t, "helper.md", "---\ndescription: d\n---\n", definition.DSHD)
	broken, _ := parse(t, "broken.md", "---\ndescription: d\nprovider: nope\n---\n", definition.DSHD)
	ok, errs := definition.CheckAll([]*definition.Definition{lead, helper, broken}, env)
	if len(ok) != 1 || ok[0] != helper || len(errs) != 2 || !strings.Contains(errs[1].Error(), `there is no tool named "broken"`) {
		t.Fatalf("ok %v, errs %v", ok, errs)
	}
	lead.Binding.Tools.Allow = []string{"read_file", "helper"}
	if ok, errs := definition.CheckAll([]*definition.Definition{lead, helper}, env); len(ok) != 2 || len(errs) != 0 {
		t.Fatalf("ok %v, errs %v", ok, errs)
	}
}

func TestCheckAll_WithoutAModelListAModelIsUsedAsGiven(t *testing.T) {
	d := newDaemon(t)
	def, _ := parse(t, "x.md", "---\ndescription: d\nmodel: my-local-model\n---\n", definition.DSHD)
	if ok, errs := definition.CheckAll([]*definition.Definition{def}, definition.Env{Service: d.svc, Tools: d.base.Names()}); len(ok) != 1 || len(errs) != 0 {
		t.Fatalf("ok %v, errs %v", ok, errs)
	}
}
