// This file implements session modes and config options: the permission
// mode (ask, accept-edits, yolo) offered both as modes and as a mode
// config option, the model selector, and the model's thinking where the
// backend can switch it.

package server

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/agent/session"
	"github.com/dshd/dshd/tools/permission"
)

// Config option ids.
const (
	optionMode     = "mode"
	optionModel    = "model"
	optionThinking = "thinking"
)

// Values of the thinking option in its select form.
const (
	thinkingOn  = "on"
	thinkingOff = "off"
)

func (c *Conn) modeState(s *session.Session) *acp.SessionModeState {
	st := &acp.SessionModeState{CurrentModeID: string(s.Mode())}
	for _, m := range permission.Modes() {
		st.AvailableModes = append(st.AvailableModes, acp.SessionMode{ID: string(m.ID), Name: m.Name, Description: m.Description})
	}
	return st
}

// configOptions is the complete option list, model first (the most
// important), then the thinking switch where there is one, then the mode.
func (c *Conn) configOptions(s *session.Session) []acp.SessionConfigOption {
	o := &c.srv.opts
	current := s.Agent().ModelID()
	model := &acp.SelectConfigOption{ID: optionModel, Name: "Model", Category: "model", CurrentValue: current}
	seen := map[string]bool{}
	add := func(id, name string) {
		if id == "" || seen[id] {
			return
		}
		seen[id] = true
		if name == "" {
			name = id
		}
		model.Options.Options = append(model.Options.Options, acp.SelectOption{Value: id, Name: name})
	}
	add(current, "")
	add(o.DefaultModel, "")
	for _, m := range o.models() {
		add(m.ID, m.Name)
	}
	mode := &acp.SelectConfigOption{ID: optionMode, Name: "Permissions", Category: "mode", CurrentValue: string(s.Mode())}
	for _, m := range permission.Modes() {
		mode.Options.Options = append(mode.Options.Options, acp.SelectOption{Value: string(m.ID), Name: m.Name, Description: m.Description})
	}
	if th := c.thinkingOption(s); th != nil {
		return []acp.SessionConfigOption{model, th, mode}
	}
	return []acp.SessionConfigOption{model, mode}
}

// thinkingOption is the model's thinking as a config option (category
// thought_level), or nil when the backend cannot switch it per request. A
// client that advertised session.configOptions.boolean gets a boolean
// option; any other a select of on and off (acp-v1 §16, checklist 63).
func (c *Conn) thinkingOption(s *session.Session) acp.SessionConfigOption {
	sw, ok := c.srv.opts.Model.(llm.ThinkingSwitch)
	if !ok {
		return nil
	}
	on, ok := sw.ThinkingSwitch()
	if !ok {
		return nil
	}
	if t := s.Thinking(); t != nil {
		on = *t
	}
	const name, desc = "Thinking", "Whether the model thinks before it answers: slower, and usually better on hard tasks."
	if caps := c.clientCaps().Session.ConfigOptions; caps != nil && caps.Boolean != nil {
		return &acp.BooleanConfigOption{ID: optionThinking, Name: name, Description: desc, Category: acp.ConfigCategoryThoughtLevel, CurrentValue: on}
	}
	cur := thinkingOff
	if on {
		cur = thinkingOn
	}
	return &acp.SelectConfigOption{ID: optionThinking, Name: name, Description: desc, Category: acp.ConfigCategoryThoughtLevel, CurrentValue: cur,
		Options: acp.SelectOptions{Options: []acp.SelectOption{{Value: thinkingOn, Name: "On"}, {Value: thinkingOff, Name: "Off"}}}}
}

// setThinking applies a set_config_option of the thinking option: a
// boolean, or the select's on or off.
func (c *Conn) setThinking(s *session.Session, v acp.ConfigValue) error {
	if c.thinkingOption(s) == nil {
		return acp.ErrInvalidParams.WithData(map[string]any{"field": "configId", "reason": "this model's thinking cannot be switched"})
	}
	var on bool
	switch v := v.(type) {
	case acp.BoolValue:
		on = bool(v)
	case acp.SelectValue:
		switch v {
		case thinkingOn:
			on = true
		case thinkingOff:
		default:
			return acp.ErrInvalidParams.WithData(map[string]any{"field": "value", "reason": fmt.Sprintf("thinking is %q or %q, not %q", thinkingOn, thinkingOff, v)})
		}
	}
	if err := s.SetThinking(on); err != nil {
		return changeRefused(s, "Thinking was not changed", err)
	}
	c.send(s, acp.SessionID(s.ID()), &acp.ConfigOptionUpdate{ConfigOptions: c.configOptions(s)})
	return nil
}

// SetSessionMode changes the permission mode; allowed mid-turn.
func (c *Conn) SetSessionMode(ctx context.Context, req *acp.SetSessionModeRequest) (*acp.SetSessionModeResponse, error) {
	s, err := c.lookup(req.SessionID)
	if err != nil {
		return nil, err
	}
	if err := c.setMode(s, req.ModeID, "modeId"); err != nil {
		return nil, err
	}
	return &acp.SetSessionModeResponse{}, nil
}

func (c *Conn) setMode(s *session.Session, id, field string) error {
	mode, err := permission.ParseMode(id)
	if err != nil {
		return acp.ErrInvalidParams.WithData(map[string]any{"field": field, "reason": fmt.Sprintf("unknown mode %q", id)})
	}
	if err := s.SetMode(mode); err != nil {
		if errors.Is(err, session.ErrNoPolicy) {
			return acp.ErrInvalidParams.WithData(map[string]any{"field": field, "reason": err.Error()})
		}
		return changeRefused(s, "The mode was not changed", err)
	}
	sid := acp.SessionID(s.ID())
	c.send(s, sid, &acp.CurrentModeUpdate{CurrentModeID: string(mode)})
	c.send(s, sid, &acp.ConfigOptionUpdate{ConfigOptions: c.configOptions(s)})
	return nil
}

// SetSessionConfigOption changes the model or the mode and answers the
// complete option list.
func (c *Conn) SetSessionConfigOption(ctx context.Context, req *acp.SetSessionConfigOptionRequest) (*acp.SetSessionConfigOptionResponse, error) {
	s, err := c.lookup(req.SessionID)
	if err != nil {
		return nil, err
	}
	if req.ConfigID == optionThinking {
		if err := c.setThinking(s, req.Value); err != nil {
			return nil, err
		}
		return &acp.SetSessionConfigOptionResponse{ConfigOptions: c.configOptions(s)}, nil
	}
	value, ok := req.Value.(acp.SelectValue)
	if !ok {
		return nil, acp.ErrInvalidParams.WithData(map[string]any{"field": "value", "reason": "this option takes a select value"})
	}
	switch req.ConfigID {
	case optionMode:
		if err := c.setMode(s, string(value), "value"); err != nil {
			return nil, err
		}
	case optionModel:
		valid := false
		for _, opt := range c.configOptions(s)[0].(*acp.SelectConfigOption).Options.Options {
			if opt.Value == string(value) {
				valid = true
			}
		}
		if !valid {
			return nil, acp.ErrInvalidParams.WithData(map[string]any{"field": "value", "reason": fmt.Sprintf("unknown model %q", value)})
		}
		if err := s.SetModel(string(value)); err != nil {
			return nil, changeRefused(s, "The model was not changed", err)
		}
		c.send(s, acp.SessionID(s.ID()), &acp.ConfigOptionUpdate{ConfigOptions: c.configOptions(s)})
	default:
		return nil, acp.ErrInvalidParams.WithData(map[string]any{"field": "configId", "reason": fmt.Sprintf("unknown config option %q", req.ConfigID)})
	}
	return &acp.SetSessionConfigOptionResponse{ConfigOptions: c.configOptions(s)}, nil
}

// watchModels sends s's options again as a config_option_update when the
// model list, still being fetched when sent was answered, turns out
// different. It waits on its own goroutine, owned by the connection like
// a turn, until the list is known or the connection ends.
func (c *Conn) watchModels(s *session.Session, sent []acp.SessionConfigOption) {
	ready := c.srv.opts.ModelsReady
	if ready == nil {
		return
	}
	if !c.holdTurn() {
		return
	}
	go func() {
		defer c.turns.Done()
		select {
		case <-ready:
		case <-c.ctx.Done():
			return
		}
		id := acp.SessionID(s.ID())
		c.mu.Lock()
		live := c.sessions[id] == s
		c.mu.Unlock()
		if !live {
			return
		}
		now := c.configOptions(s)
		if slices.Equal(modelValues(sent), modelValues(now)) {
			return
		}
		// The list is the daemon's, not the conversation's: not recorded.
		c.send(nil, id, &acp.ConfigOptionUpdate{ConfigOptions: now})
	}()
}

// modelValues are the model selector's choices among opts.
func modelValues(opts []acp.SessionConfigOption) []string {
	var out []string
	for _, o := range opts {
		if sel, ok := o.(*acp.SelectConfigOption); ok && sel.ID == optionModel {
			for _, v := range sel.Options.Options {
				out = append(out, v.Value+"\x00"+v.Name)
			}
		}
	}
	return out
}
