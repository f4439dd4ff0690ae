// Package fork is the subagent provider that runs an in-process child
// seeded with the parent's conversation. What makes a fork a fork is in
// fork.go: the child starts from the parent's completed turns — shared,
// never copied, with their token estimate carried along (agent.History),
// so Start costs O(1) in the parent's length and visits none of its
// messages — under the parent's own system prompt, so the model sees the
// same prefix; the task arrives as the child's next user message, framed
// to say the child is now a subagent with one task. Nothing the child
// appends reaches the parent. It declares every start-time capability;
// its runs are Steerable and Resumable.
//
// fork imports subagents and its in-process machinery, never another
// provider. Each run owns the goroutine of its child's turn; Dispose
// returns after it.
package fork
