package agent

import "github.com/dshd/dshd/agent/llm"

// OnEstimate makes every token estimate call fn with the message first, so
// a test can count the messages something visits; restore undoes it. The
// caller makes sure nothing estimates concurrently with restore.
func OnEstimate(fn func(llm.Message)) (restore func()) {
	prev := estimateTokens
	estimateTokens = func(m llm.Message) int64 {
		fn(m)
		return prev(m)
	}
	return func() { estimateTokens = prev }
}
