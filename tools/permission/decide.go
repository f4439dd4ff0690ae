// This file is the one place a permission outcome is derived: the rule
// for "cancelled", the decision every caller asks for, a tool's side of
// it, and the gate of a subagent child.

package permission

import (
	"context"

	"github.com/dshd/dshd/tools"
)

// cancelled is the one rule for the cancelled outcome: a question is
// cancelled when the work it belongs to was cancelled while it was
// pending (ctx is done, whatever the asker answered or failed with) or
// when the user answered "cancelled".
func cancelled(ctx context.Context, answer Answer, _ error) bool {
	return ctx.Err() != nil || answer == AnswerCancelled
}

// Decide asks gate about req and is how every caller gets an outcome: the
// agent loop for each gated call, a tool before it acts ([Permit]). A nil
// gate allows. A gate that fails because ctx ended decided Cancelled (the
// rule above); one that fails otherwise is Rejected with its error.
func Decide(ctx context.Context, gate tools.Permission, req tools.PermissionRequest) (tools.Decision, error) {
	if gate == nil {
		return tools.Allowed, nil
	}
	d, err := gate.Check(ctx, req)
	if err != nil {
		if cancelled(ctx, "", err) {
			return tools.Cancelled, nil
		}
		return tools.Rejected, err
	}
	return d, nil
}

// Permit is a tool's side of the decision: it asks call's environment
// about req, stamped with the call's id and (unless req has its own) its
// input. It returns the decision: the call may go on when it is
// [tools.Allowed]; a cancelled decision is [tools.ErrCancelled], a gate
// that failed its error, and either ends the call. A rejection
// ([tools.Rejected], [tools.Refused]) comes with no error: the tool tells
// the model, in the words of [Rejection].
func Permit(ctx context.Context, call *tools.Call, req tools.PermissionRequest) (tools.Decision, error) {
	req.ToolCallID = call.ID
	if req.RawInput == nil && len(call.Input) > 0 {
		req.RawInput = call.Input
	}
	var gate tools.Permission
	if call.Env != nil {
		gate = call.Env.Permission
	}
	d, err := Decide(ctx, gate, req)
	switch {
	case err != nil:
		return tools.Rejected, err
	case d == tools.Cancelled:
		return d, tools.ErrCancelled
	}
	return d, nil
}

// Check is [Permit] as a tool answers the model: nil, nil when the call
// may go on; a rejection is the model's answer, in the words of
// [Rejection] for what; a cancelled decision or a failed gate is the error
// that ends the call.
func Check(ctx context.Context, call *tools.Call, req tools.PermissionRequest, what string) (*tools.Result, error) {
	d, err := Permit(ctx, call, req)
	if d == tools.Allowed || err != nil {
		return nil, err
	}
	return tools.Errorf("%s", Rejection(d, what)), nil
}

// Rejection is what the model is told when d rejected what (a phrase:
// "this edit (Create a.txt)"): a person's answer, or a refusal nobody was
// asked for, which retrying or asking the user cannot change.
func Rejection(d tools.Decision, what string) string {
	if d == tools.Refused {
		return what + " was refused without asking anyone: this agent is not allowed to do that; do not retry it — finish what you can without it and say what is left undone"
	}
	return "the user rejected " + what + "; do not retry it as it is — ask the user or try something else"
}

// ForChild returns the permission gate of a subagent child whose parent's
// gate is parent; it can never allow more than the parent's. A child
// pinned to deny gets [DenyAll]. Otherwise each request goes to the
// parent's gate (its mode and remembered answers apply, and it asks the
// parent's editor) labelled with requester, the child it comes from — a
// label a deeper descendant already set is kept: the request belongs to
// the child that made it.
func ForChild(parent tools.Permission, requester string, deny bool) tools.Permission {
	if deny {
		return DenyAll
	}
	return labelled{parent: parent, requester: requester}
}

type labelled struct {
	parent    tools.Permission
	requester string
}

func (l labelled) Check(ctx context.Context, req tools.PermissionRequest) (tools.Decision, error) {
	if req.Requester == "" {
		req.Requester = l.requester
	}
	return Decide(ctx, l.parent, req)
}
