// Package llmtest holds what the tests of the [llm.Model] implementations
// (agent/llm/openai, agent/llm/scripted) share: a watchdog that fails a
// blocked test with every goroutine's stack, and the check that a stream
// cancelled mid-way ends with the context's error.
package llmtest
