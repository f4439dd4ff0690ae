// Package llmtest holds what the tests of the [llm.Model] implementations
// (agent/llm/openai, agent/llm/scripted) share: the check that a stream
// cancelled mid-way ends with the context's error, waited for under the
// module's test watchdog (internal/testkit).
package llmtest
