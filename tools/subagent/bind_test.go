package subagent_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/subagents/fork"
	"github.com/dshd/dshd/subagents/spawn"
	"github.com/dshd/dshd/subagents/subagenttest"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/subagent"
)

// stubProvider is a provider that only has a name and a context contract;
// it takes no options of its own and starts no child.
type stubProvider struct {
	name    string
	inherit bool
}

func (p stubProvider) Name() string                         { return p.name }
func (p stubProvider) Capabilities() subagents.Capabilities { return subagents.Capabilities{} }
func (p stubProvider) InheritsParentContext() bool          { return p.inherit }
func (p stubProvider) Start(context.Context, subagents.StartRequest) (subagents.Run, error) {
	return nil, errors.New("stub")
}

// bindWatched binds b and returns a channel of its tool's appearances and
// disappearances.
func bindWatched(t *testing.T, svc *subagents.Service, reg *tools.Registry, b subagent.Binding, log *slog.Logger) <-chan bool {
	t.Helper()
	ch := make(chan bool, 16)
	dispose, err := subagent.Bind(svc, reg, b, &subagent.BindOptions{Logger: log, OnChange: func(r bool) { ch <- r }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dispose)
	return ch
}

func TestBind_TheToolRegistersAtOnceWhenItsProviderIsAlreadyThere(t *testing.T) {
	svc, reg := subagents.NewService(nil), tools.NewRegistry(nil)
	svc.RegisterProvider(spawn.New(nil))
	dispose, err := subagent.Bind(svc, reg, subagent.Binding{Provider: "spawn"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dispose()
	tl, ok := reg.Get("subagent")
	if !ok || tl.Kind() != tools.KindOther {
		t.Fatal("the tool does not exist although its provider does")
	}
}

func TestBind_TheToolDoesNotExistWhileItsProviderIsAbsentAndAppearsWhenItComes(t *testing.T) {
	var logs bytes.Buffer
	svc, reg := subagents.NewService(nil), tools.NewRegistry(nil)
	ch := bindWatched(t, svc, reg, subagent.Binding{Provider: "fork", ToolName: "subagent_fork"}, slog.New(slog.NewTextHandler(&logs, nil)))
	if _, ok := reg.Get("subagent_fork"); ok {
		t.Fatal("the tool exists before its provider")
	}
	if !strings.Contains(logs.String(), "waiting for its provider") {
		t.Fatalf("no note about the wait: %q", logs.String())
	}
	svc.RegisterProvider(fork.New(nil))
	if !subagenttest.Recv(t, ch) {
		t.Fatal("the tool did not appear")
	}
	if _, ok := reg.Get("subagent_fork"); !ok {
		t.Fatal("the tool is missing after its provider arrived")
	}
}

func TestBind_AMistypedProviderNameIsAToolThatNeverMaterialises(t *testing.T) {
	svc, reg := subagents.NewService(nil), tools.NewRegistry(nil)
	bindWatched(t, svc, reg, subagent.Binding{Provider: "spwan"}, nil)
	ch := make(chan subagents.Event, 4)
	stop := svc.Observe(func(ev subagents.Event) { ch <- ev })
	defer stop()
	svc.RegisterProvider(spawn.New(nil))
	subagenttest.Recv(t, ch)
	if names := reg.Names(); len(names) != 0 {
		t.Fatalf("tools = %v", names)
	}
}

func TestBind_TheToolUnregistersWhenItsProviderGoesAway(t *testing.T) {
	svc, reg := subagents.NewService(nil), tools.NewRegistry(nil)
	dispose, _ := svc.RegisterProvider(spawn.New(nil))
	ch := bindWatched(t, svc, reg, subagent.Binding{Provider: "spawn"}, nil)
	if !subagenttest.Recv(t, ch) {
		t.Fatal("not registered")
	}
	dispose()
	if subagenttest.Recv(t, ch) {
		t.Fatal("registered again instead of going away")
	}
	if _, ok := reg.Get("subagent"); ok {
		t.Fatal("the tool outlived its provider")
	}
}

func TestBind_RegisteringTheProviderAgainDerivesTheWordingAgain(t *testing.T) {
	svc, reg := subagents.NewService(nil), tools.NewRegistry(nil)
	dispose, _ := svc.RegisterProvider(stubProvider{name: "p"})
	ch := bindWatched(t, svc, reg, subagent.Binding{Provider: "p"}, nil)
	subagenttest.Recv(t, ch)
	tl, _ := reg.Get("subagent")
	if !strings.Contains(tl.Description(), "does not see this conversation") {
		t.Fatalf("fresh wording expected: %q", tl.Description())
	}
	dispose()
	for subagenttest.Recv(t, ch) {
	}
	svc.RegisterProvider(stubProvider{name: "p", inherit: true})
	for !subagenttest.Recv(t, ch) {
	}
	tl, _ = reg.Get("subagent")
	if !strings.Contains(tl.Description(), "completed turns") {
		t.Fatalf("the reloaded provider's wording was not derived again: %q", tl.Description())
	}
}

func TestBind_ASecondBindingWithTheSameToolNameIsRejected(t *testing.T) {
	svc, reg := subagents.NewService(nil), tools.NewRegistry(nil)
	dispose, err := subagent.Bind(svc, reg, subagent.Binding{Provider: "spawn"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Rejected even though the first tool does not exist yet.
	if _, err := subagent.Bind(svc, reg, subagent.Binding{Provider: "fork"}, nil); !errors.Is(err, subagent.ErrDuplicateBinding) {
		t.Fatalf("err = %v", err)
	}
	// Another registry is another namespace.
	d2, err := subagent.Bind(svc, tools.NewRegistry(nil), subagent.Binding{Provider: "fork"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	d2()
	dispose()
	dispose()
	d3, err := subagent.Bind(svc, reg, subagent.Binding{Provider: "fork"}, nil)
	if err != nil {
		t.Fatalf("the name stayed claimed after dispose: %v", err)
	}
	d3()
	reg.Register(&subagenttest.Tool{ToolName: "taken"})
	if _, err := subagent.Bind(svc, reg, subagent.Binding{Provider: "spawn", ToolName: "taken"}, nil); !errors.Is(err, subagent.ErrDuplicateBinding) {
		t.Fatalf("binding over an existing tool: %v", err)
	}
}

func TestBind_TwoBindingsExposeTwoProvidersUnderDistinctNames(t *testing.T) {
	svc, reg := subagents.NewService(nil), tools.NewRegistry(nil)
	svc.RegisterProvider(spawn.New(nil))
	svc.RegisterProvider(fork.New(nil))
	for _, b := range subagent.DefaultBindings() {
		dispose, err := subagent.Bind(svc, reg, b, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer dispose()
	}
	if got := reg.Names(); !slices.Equal(got, []string{"subagent", "subagent_fork"}) {
		t.Fatalf("tools = %v", got)
	}
}

func TestBind_DisposeRemovesTheToolForGood(t *testing.T) {
	svc, reg := subagents.NewService(nil), tools.NewRegistry(nil)
	svc.RegisterProvider(spawn.New(nil))
	dispose, _ := subagent.Bind(svc, reg, subagent.Binding{Provider: "spawn"}, nil)
	dispose()
	svc.RegisterProvider(stubProvider{name: "other"})
	// Registering another provider goes through the observers; the
	// disposed binding must not bring its tool back.
	ch := make(chan struct{})
	stop := svc.Observe(func(subagents.Event) { close(ch) })
	svc.RegisterProvider(stubProvider{name: "marker"})
	subagenttest.Recv(t, ch)
	stop()
	if _, ok := reg.Get("subagent"); ok {
		t.Fatal("the tool survived its binding")
	}
}

func TestBind_RejectsABindingWithoutAProviderOrWithABadName(t *testing.T) {
	svc, reg := subagents.NewService(nil), tools.NewRegistry(nil)
	for _, b := range []subagent.Binding{{}, {Provider: "spawn", ToolName: "has space"}} {
		if _, err := subagent.Bind(svc, reg, b, nil); err == nil {
			t.Fatalf("Bind(%+v) succeeded", b)
		}
	}
}

func TestWording_TheToolIsWordedForItsProvidersContext(t *testing.T) {
	cases := []struct {
		name     string
		provider subagents.Provider
		want     []string
		not      string
	}{
		{"AFreshContextProviderGetsTheStandalonePromptWording", spawn.New(nil), []string{"does not see this conversation", "self-contained"}, "completed turns"},
		{"AnInheritingProviderIsToldTheChildSeesTheCompletedTurns", fork.New(nil), []string{"completed turns", "only what is new"}, "does not see this conversation"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			svc, reg := subagents.NewService(nil), tools.NewRegistry(nil)
			svc.RegisterProvider(tc.provider)
			d, _ := subagent.Bind(svc, reg, subagent.Binding{Provider: tc.provider.Name()}, nil)
			defer d()
			tl, _ := reg.Get("subagent")
			prompt := promptDescription(t, tl)
			if !contains(tl.Description(), tc.want...) || !contains(prompt, tc.want...) {
				t.Fatalf("description %q\nprompt %q", tl.Description(), prompt)
			}
			if strings.Contains(tl.Description()+prompt, tc.not) {
				t.Fatalf("the wording mentions %q", tc.not)
			}
		})
	}
}

func TestSchema_TheModelSeesOnlyDescriptionAndPrompt(t *testing.T) {
	svc, reg := subagents.NewService(nil), tools.NewRegistry(nil)
	svc.RegisterProvider(spawn.New(nil))
	d, _ := subagent.Bind(svc, reg, subagent.Binding{Provider: "spawn", AgentOptions: subagent.AgentOptions{Model: "m"}}, nil)
	defer d()
	tl, _ := reg.Get("subagent")
	s := schemaOf(t, tl.InputSchema())
	props := s["properties"].(map[string]any)
	if s["type"] != "object" || len(props) != 2 || s["additionalProperties"] != false {
		t.Fatalf("schema = %v", s)
	}
	for _, k := range []string{"description", "prompt"} {
		p, ok := props[k].(map[string]any)
		if !ok || p["type"] != "string" || p["description"] == "" {
			t.Fatalf("property %s = %v", k, props[k])
		}
	}
	if req := s["required"].([]any); len(req) != 2 || req[0] != "description" || req[1] != "prompt" {
		t.Fatalf("required = %v", req)
	}
	if !strings.Contains(props["description"].(map[string]any)["description"].(string), "3-7 words") {
		t.Fatal("the description parameter does not ask for 3-7 words")
	}
}

func promptDescription(t *testing.T, tl tools.Tool) string {
	return schemaOf(t, tl.InputSchema())["properties"].(map[string]any)["prompt"].(map[string]any)["description"].(string)
}
