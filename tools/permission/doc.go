// Package permission is the one home of a permission decision: the
// session's [Policy] (the modes ask, accept-edits and yolo, and the
// remembered "always" answers), the ask flow through an editor's [Asker],
// the single rule for the cancelled outcome, the decision every caller
// asks for ([Decide], and [Permit] for a tool), and the gate of a subagent
// child ([ForChild]), which labels the child's requests and never allows
// more than its parent's gate.
//
// The vocabulary — [tools.Permission], [tools.PermissionRequest],
// [tools.Decision], [tools.Effect] — is the tools contract's, which
// tools.Env refers to; this package implements it and imports only tools.
// A pending question runs on one goroutine that ends when its Asker
// returns; the policy stops waiting for it as soon as the turn is
// cancelled.
package permission
