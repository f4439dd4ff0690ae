// Package openai is an OpenAI-compatible Chat Completions client over
// server-sent events, written on the standard library. DeepSeek is the
// default endpoint; presets cover OpenAI, Ollama, vLLM, llama.cpp and
// OpenRouter. Server differences are capability flags ([Compat]), never
// guesses from the URL.
//
// A [Client] implements [llm.Model] and [llm.Lister]:
//
//	c, err := openai.New(openai.Options{APIKey: openai.APIKey(os.Getenv("DEEPSEEK_API_KEY"))})
//	msg, usage, finish, err := llm.Collect(c.Stream(ctx, &llm.Request{Messages: msgs}))
//
// What a call guarantees:
//
//   - Retries (with backoff, jitter and the server's Retry-After) happen only
//     before any of the response body was read, so no event is ever sent
//     twice. 400, 401, 402, 422 and 429 insufficient_quota are never retried.
//     A Retry-After over 30s is not slept: the error says how long the
//     server asked for.
//   - A server that sends nothing — no response headers, or headers and
//     then not a byte — fails the call after [Options.FirstByteTimeout].
//   - An error body's human reason is kept whichever member carries it
//     (message, or data, details, reason beside a generic message), by
//     the rule [reason.Of] (internal/reason) dshd applies to every peer's error.
//   - Success means a finish reason arrived. A stream that ends without one
//     fails with [llm.ErrTruncated].
//   - An answer is bounded in bytes as well as in time: its text, reasoning
//     and tool calls together by [Options.MaxAnswerBytes], and one event
//     or a non-streamed body carrying it by twice that. A call over it
//     fails with [ErrAnswerTooLong], naming the setting, and is never
//     retried; a body cut at the bound is never decoded as a whole one.
//   - Keep-alive comments never count as progress: a first-data timeout, an
//     idle timeout between data events and an absolute per-call cap bound
//     every call (see [Options]).
//   - DeepSeek's reasoning_content is sent back verbatim on every assistant
//     message when [Compat.EchoReasoning] is set; a forced tool_choice is
//     never sent.
//
// The package imports only the standard library, agent/llm,
// internal/reason (the error rule) and internal/settingnames. Its only
// goroutines are the HTTP transport's and one timer per call, all ended
// when the call's iterator returns. The loopback fake server for tests is
// agent/llm/openai/openaitest.
package openai
