// Package llmtest holds what the tests of the [llm.Model] implementations
// (agent/llm/openai, agent/llm/scripted) share: collecting a stream's
// events, and the check that a stream cancelled mid-way ends with the
// context's error, both under the module's test watchdog
// (internal/testkit).
package llmtest
