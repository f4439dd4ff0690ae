// This file gathers what `dshd prompt --json` says a turn spent: the
// turn's token usage, everything its subagents spent included, and the
// share of each subagent it delegated to.

package main

import (
	"encoding/json"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/acp/server"
	"github.com/dshd/dshd/agent/llm"
)

// metaTurnUsage is the usage_update _meta key that carries the running
// turn's usage, its subagents' included (acp/server/translate.go).
const metaTurnUsage = "dshd.dev/turnUsage"

// turnUsage follows a turn's updates for its usage.
type turnUsage struct {
	total    *acp.Usage
	children []childUsage
}

// childUsage is one subagent the turn delegated to, and what it spent
// with its own descendants.
type childUsage struct {
	ToolCallID acp.ToolCallID `json:"toolCallId"`
	Subagent   string         `json:"subagent"`
	StopReason string         `json:"stopReason"`
	Usage      *acp.Usage     `json:"usage"`
}

// answered takes the prompt response's usage, the turn's whole count,
// when the agent sent one: it also covers what was spent after the last
// usage_update.
func (t *turnUsage) answered(u *acp.Usage) {
	if u != nil {
		t.total = u
	}
}

// observe takes in one update of the turn.
func (t *turnUsage) observe(u acp.SessionUpdate) {
	switch u := u.(type) {
	case *acp.UsageUpdate:
		if v, ok := u.Meta[metaTurnUsage]; ok {
			var total acp.Usage
			if b, err := json.Marshal(v); err == nil && json.Unmarshal(b, &total) == nil {
				t.total = &total
			}
		}
	case *acp.ToolCallUpdate:
		if len(u.RawOutput) == 0 || (u.Status != acp.ToolCallStatusCompleted && u.Status != acp.ToolCallStatusFailed) {
			return
		}
		// The subagent tool's rawOutput (tools/subagent.RawOutput) names
		// the binding it ran.
		var raw struct {
			Subagent   string    `json:"subagent"`
			StopReason string    `json:"stopReason"`
			Usage      llm.Usage `json:"usage"`
		}
		if json.Unmarshal(u.RawOutput, &raw) != nil || raw.Subagent == "" {
			return
		}
		t.children = append(t.children, childUsage{ToolCallID: u.ToolCallID, Subagent: raw.Subagent, StopReason: raw.StopReason, Usage: server.WireUsage(raw.Usage)})
	}
}

// summary is the usage part of the --json run's last line.
func (t *turnUsage) summary(line map[string]any) {
	if t.total != nil {
		line["usage"] = t.total
	}
	if len(t.children) > 0 {
		line["children"] = t.children
	}
}

// answered records the prompt response's usage for the last line.
func (h *headless) answered(u *acp.Usage) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.usage.answered(u)
}
