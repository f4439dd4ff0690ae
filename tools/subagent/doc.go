// Package subagent is the model-facing subagent tool: the model delegates a
// task to a child agent and gets the child's final output back as the
// tool's result.
//
// A [Binding] ties one tool name to one provider of a
// [subagents.Service] (spawn, fork, acp, …); which provider runs the child
// is configuration, never a parameter the model sees. The model sees only
// {description, prompt}. The tool's wording follows the bound provider's
// context contract: a fresh-context provider's children do not see the
// conversation, so the prompt must be self-contained; an inheriting
// provider's children already see its completed turns, so the prompt says
// only what is new.
//
// [Bind] mirrors the provider's lifecycle: the tool exists exactly while
// its provider is registered, whatever order they come in, and its wording
// is derived again whenever the provider is registered again. Each call
// starts a run, waits for it (the parent's turn blocks until the child is
// done), always disposes it, turns the turn's cancellation into the run's,
// and reports any ending other than completed as an error result.
//
// The tool is registered once per binding, daemon-wide, and is a
// [subagents.Delegator]: each session binds it to the calling agent's
// [subagents.Scope] (subagents.Scope.Attach), and a call delegates from
// that scope. Outside a session it has no scope, and a call is an error
// result.
//
// The package imports subagents and tools, never a provider. It starts no
// goroutines of its own; the service delivers provider events to it.
package subagent
