// Package subagenttest holds helpers for testing subagent providers and the
// tools over them: a deterministic [llm.Model] driven by a function, and a
// builder for a real parent agent scope in a temporary workspace.
//
// It is test support: nothing in the daemon imports it.
package subagenttest
