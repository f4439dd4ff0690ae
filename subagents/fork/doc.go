// Package fork is the subagent provider that runs an in-process child
// seeded with the parent's conversation: the child starts from the
// parent's completed turns — shared, never copied, in O(1) of the
// parent's length — and the parent's own system prompt, so the model sees
// the same prefix; the task arrives as the child's next user message.
// Nothing the child appends reaches the parent. It declares every
// start-time capability; its runs are Steerable and Resumable.
//
// fork imports subagents and its in-process machinery, never another
// provider. Each run owns the goroutine of its child's turn; Dispose
// returns after it.
package fork
