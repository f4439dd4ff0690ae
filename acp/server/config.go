// This file implements session modes and config options: the permission
// mode (ask, accept-edits, yolo) offered both as modes and as a mode
// config option, and the model selector.

package server

import (
	"context"
	"fmt"
	"slices"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/agent/session"
	"github.com/dshd/dshd/tools/permission"
)

// Config option ids.
const (
	optionMode  = "mode"
	optionModel = "model"
)

func (c *Conn) modeState(s *session.Session) *acp.SessionModeState {
	st := &acp.SessionModeState{CurrentModeID: string(s.Mode())}
	for _, m := range permission.Modes() {
		st.AvailableModes = append(st.AvailableModes, acp.SessionMode{ID: string(m.ID), Name: m.Name, Description: m.Description})
	}
	return st
}

// configOptions is the complete option list, model first (the most
// important), then the mode.
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
	return []acp.SessionConfigOption{model, mode}
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
		return acp.ErrInvalidParams.WithData(map[string]any{"field": field, "reason": err.Error()})
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
		s.SetModel(string(value))
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
	c.mu.Lock()
	closing := c.closing
	if !closing {
		c.turns.Add(1)
	}
	c.mu.Unlock()
	if closing {
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
