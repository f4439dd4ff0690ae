// Tests of the thinking config option: offered where the backend can
// switch thinking per request, boolean only to a client that advertised
// session.configOptions.boolean, a select of on/off to any other; it
// changes the model's requests and survives a load.

package server_test

import (
	"testing"

	"github.com/dshd/dshd/acp"
)

const thinkScript = `{"rules": [{"reasoning": "Let me think.", "text": "Answer."}]}`

var boolCaps = acp.ClientCapabilities{Session: acp.ClientSessionCapabilities{ConfigOptions: &acp.SessionConfigOptionsCapabilities{Boolean: &acp.EmptyCapability{}}}}

func optionByID(opts []acp.SessionConfigOption, id string) acp.SessionConfigOption {
	for _, o := range opts {
		if o.OptionID() == id {
			return o
		}
	}
	return nil
}

// thoughts counts the agent_thought_chunk updates among us.
func thoughts(us []acp.SessionUpdate) int { return len(ofType[*acp.AgentThoughtChunk](us)) }

func TestThinkingIsABooleanOptionForAClientThatTakesBooleans(t *testing.T) {
	h := newHarness(t, hopts{script: thinkScript, caps: boolCaps})
	resp, err := h.client.NewSession(h.ctx, &acp.NewSessionRequest{Cwd: h.cwd, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	sid := resp.SessionID
	opt, ok := optionByID(resp.ConfigOptions, "thinking").(*acp.BooleanConfigOption)
	if !ok || !opt.CurrentValue || opt.Category != acp.ConfigCategoryThoughtLevel {
		t.Fatalf("thinking option %#v, want a boolean thought_level option, on", optionByID(resp.ConfigOptions, "thinking"))
	}
	if ids := []string{resp.ConfigOptions[0].OptionID(), resp.ConfigOptions[len(resp.ConfigOptions)-1].OptionID()}; ids[0] != "model" || ids[1] != "mode" {
		t.Errorf("options run %v…%v, want the model first and the mode last", ids[0], ids[1])
	}
	h.mustPrompt(sid, "think", acp.StopReasonEndTurn)
	if thoughts(h.ed.of(sid)) == 0 {
		t.Fatal("no thought chunks with thinking on")
	}

	set, err := h.client.SetSessionConfigOption(h.ctx, &acp.SetSessionConfigOptionRequest{SessionID: sid, ConfigID: "thinking", Value: acp.BoolValue(false)})
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := optionByID(set.ConfigOptions, "thinking").(*acp.BooleanConfigOption); !ok || o.CurrentValue {
		t.Fatalf("after turning it off: %#v", optionByID(set.ConfigOptions, "thinking"))
	}
	h.ed.waitUntil(h.ctx, t, "config_option_update", func() bool { return len(ofType[*acp.ConfigOptionUpdate](h.ed.of(sid))) > 0 })
	h.ed.reset()
	h.mustPrompt(sid, "think", acp.StopReasonEndTurn)
	if n := thoughts(h.ed.of(sid)); n != 0 {
		t.Fatalf("%d thought chunks with thinking off: the request did not turn it off", n)
	}

	// The setting is the session's: a load keeps it.
	if _, err := h.client.CloseSession(h.ctx, &acp.CloseSessionRequest{SessionID: sid}); err != nil {
		t.Fatal(err)
	}
	load, err := h.client.LoadSession(h.ctx, &acp.LoadSessionRequest{SessionID: sid, Cwd: h.cwd, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := optionByID(load.ConfigOptions, "thinking").(*acp.BooleanConfigOption); !ok || o.CurrentValue {
		t.Fatalf("after a load: %#v, want off", optionByID(load.ConfigOptions, "thinking"))
	}
	h.ed.reset()
	h.mustPrompt(sid, "think", acp.StopReasonEndTurn)
	if n := thoughts(h.ed.of(sid)); n != 0 {
		t.Fatalf("%d thought chunks after the load: the setting was lost", n)
	}
}

func TestThinkingIsASelectOptionForAnyOtherClient(t *testing.T) {
	h := newHarness(t, hopts{script: thinkScript})
	resp, err := h.client.NewSession(h.ctx, &acp.NewSessionRequest{Cwd: h.cwd, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range resp.ConfigOptions {
		if _, ok := o.(*acp.BooleanConfigOption); ok {
			t.Fatalf("boolean option %q sent to a client without session.configOptions.boolean", o.OptionID())
		}
	}
	opt, ok := optionByID(resp.ConfigOptions, "thinking").(*acp.SelectConfigOption)
	if !ok || opt.CurrentValue != "on" || opt.Category != acp.ConfigCategoryThoughtLevel || len(opt.Options.Options) != 2 {
		t.Fatalf("thinking option %#v, want a select of on and off, on", optionByID(resp.ConfigOptions, "thinking"))
	}
	sid := resp.SessionID
	set, err := h.client.SetSessionConfigOption(h.ctx, &acp.SetSessionConfigOptionRequest{SessionID: sid, ConfigID: "thinking", Value: acp.SelectValue("off")})
	if err != nil {
		t.Fatal(err)
	}
	if o := optionByID(set.ConfigOptions, "thinking").(*acp.SelectConfigOption); o.CurrentValue != "off" {
		t.Fatalf("after turning it off: %q", o.CurrentValue)
	}
	h.ed.reset()
	h.mustPrompt(sid, "think", acp.StopReasonEndTurn)
	if n := thoughts(h.ed.of(sid)); n != 0 {
		t.Fatalf("%d thought chunks with thinking off", n)
	}
	_, err = h.client.SetSessionConfigOption(h.ctx, &acp.SetSessionConfigOptionRequest{SessionID: sid, ConfigID: "thinking", Value: acp.SelectValue("maybe")})
	wantCode(t, "thinking maybe", err, -32602)
}

func TestNoThinkingOptionWhereTheBackendCannotSwitchIt(t *testing.T) {
	h := newHarness(t, hopts{model: countingModel{}, caps: boolCaps})
	resp, err := h.client.NewSession(h.ctx, &acp.NewSessionRequest{Cwd: h.cwd, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if o := optionByID(resp.ConfigOptions, "thinking"); o != nil {
		t.Fatalf("a thinking option %#v for a backend without a switch", o)
	}
	_, err = h.client.SetSessionConfigOption(h.ctx, &acp.SetSessionConfigOptionRequest{SessionID: resp.SessionID, ConfigID: "thinking", Value: acp.BoolValue(false)})
	wantCode(t, "set thinking without a switch", err, -32602)
}

func TestAReplayNeverShowsARecordedBooleanOptionToAClientWithoutBooleans(t *testing.T) {
	h := newHarness(t, hopts{script: thinkScript, caps: boolCaps})
	sid := h.newSession()
	if _, err := h.client.SetSessionConfigOption(h.ctx, &acp.SetSessionConfigOptionRequest{SessionID: sid, ConfigID: "thinking", Value: acp.BoolValue(false)}); err != nil {
		t.Fatal(err)
	}
	h.mustPrompt(sid, "think", acp.StopReasonEndTurn)
	if _, err := h.client.CloseSession(h.ctx, &acp.CloseSessionRequest{SessionID: sid}); err != nil {
		t.Fatal(err)
	}
	h.connect(acp.ClientCapabilities{})
	h.ed.reset()
	load, err := h.client.LoadSession(h.ctx, &acp.LoadSessionRequest{SessionID: sid, Cwd: h.cwd, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range ofType[*acp.ConfigOptionUpdate](h.ed.of(sid)) {
		for _, o := range u.ConfigOptions {
			if _, ok := o.(*acp.BooleanConfigOption); ok {
				t.Fatalf("the replay shows boolean option %q to a client without booleans", o.OptionID())
			}
		}
	}
	if o, ok := optionByID(load.ConfigOptions, "thinking").(*acp.SelectConfigOption); !ok || o.CurrentValue != "off" {
		t.Fatalf("the load's options show thinking as %#v, want the select, off", optionByID(load.ConfigOptions, "thinking"))
	}
}
