// Package subagenttest holds helpers for testing subagent providers and the
// tools over them: a deterministic [llm.Model] driven by a function, a
// record of the requests a model saw, a builder for a real parent agent
// scope in a temporary workspace, and starting and waiting for a run
// through the parent's service.
//
// It is test support: nothing in the daemon imports it.
package subagenttest
