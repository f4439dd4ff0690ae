// Package agent is the agent loop: a prompt goes to the model, the model's
// tool calls run, their results go back to the model, and so on until a
// stop reason. It emits typed [Event]s and knows nothing of ACP; acp/server
// is the only package that turns events into session/update notifications.
//
// An [Agent] owns its conversation [History] and runs one turn at a time.
// A turn's goroutines (the model stream, one per running tool) are all
// started and awaited inside [Agent.Prompt]: when Prompt returns, nothing of
// the turn is still running. Cancelling the context given to Prompt stops
// the model stream and every running tool; the turn still returns, with
// [StopCancelled], after its last event.
//
// A [Registry] maps live agent ids to agents so an observer (a subagent
// start observer, a debugging endpoint) can reach a running agent.
package agent
