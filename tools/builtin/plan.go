// This file implements the plan tool.

package builtin

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dshd/dshd/tools"
)

// PlanName is the plan tool's name.
const PlanName = "plan"

// PlanParams are plan's arguments.
type PlanParams struct {
	Entries []PlanParamsEntry `json:"entries" jsonschema:"The complete plan, in order; it replaces the previous one"`
}

// PlanParamsEntry is one step as the model writes it.
type PlanParamsEntry struct {
	Content  string `json:"content" jsonschema:"What the step does"`
	Priority string `json:"priority" jsonschema:"How important the step is"`
	Status   string `json:"status" jsonschema:"Where the step stands"`
}

// Plan priorities and statuses, as ACP names them.
const (
	PriorityHigh   = "high"
	PriorityMedium = "medium"
	PriorityLow    = "low"

	StatusPending    = "pending"
	StatusInProgress = "in_progress"
	StatusCompleted  = "completed"
)

// planEnums lists the allowed priorities and statuses in the schema.
func planEnums(s *jsonschema.Schema) {
	entry := s.Properties["entries"].Items.Properties
	entry["priority"].Enum = []any{PriorityHigh, PriorityMedium, PriorityLow}
	entry["status"].Enum = []any{StatusPending, StatusInProgress, StatusCompleted}
}

//go:embed plan.md
var planDescription string

// NewPlan returns the plan tool, titled "Update plan". It publishes
// through the call's Env.Plan.
func NewPlan() tools.Tool {
	t := tools.NewTyped(tools.Static{ToolName: PlanName, ToolDescription: planDescription, Schema: tools.LazySchema[PlanParams](planEnums), ToolKind: tools.KindThink,
		ToolTitle: func(json.RawMessage) string { return "Update plan" }}, updatePlan)
	return &t
}

// updatePlan runs a call of plan: the entries checked, then published.
func updatePlan(ctx context.Context, call *tools.Call, p PlanParams) (*tools.Result, error) {
	entries := make([]tools.PlanEntry, len(p.Entries))
	var counts [3]int
	for i, e := range p.Entries {
		if strings.TrimSpace(e.Content) == "" {
			return tools.Errorf("entry %d: content is empty", i+1), nil
		}
		switch e.Priority {
		case PriorityHigh, PriorityMedium, PriorityLow:
		default:
			return tools.Errorf("entry %d: priority %q is not one of high, medium, low", i+1, e.Priority), nil
		}
		switch e.Status {
		case StatusPending:
			counts[0]++
		case StatusInProgress:
			counts[1]++
		case StatusCompleted:
			counts[2]++
		default:
			return tools.Errorf("entry %d: status %q is not one of pending, in_progress, completed", i+1, e.Status), nil
		}
		entries[i] = tools.PlanEntry(e)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if call.Env != nil && call.Env.Plan != nil {
		call.Env.Plan(entries)
	}
	out := fmt.Sprintf("Plan updated: %d steps (%d completed, %d in progress, %d pending)", len(entries), counts[2], counts[1], counts[0])
	return &tools.Result{Output: out, RawOutput: entries}, nil
}
