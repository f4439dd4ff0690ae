// Package openaitest is a fake OpenAI-compatible (DeepSeek-flavoured) chat
// server on loopback, named after net/http/httptest. Tests of the openai
// client, of the agent and of the conformance suite use it, and so does the
// demo program: nothing here needs a *testing.T.
//
//	srv := openaitest.New()
//	defer srv.Close()
//	srv.Enqueue(
//		openaitest.Status(429),                                  // retried
//		openaitest.Reply{Reasoning: []string{"", "think"}, Text: []string{"Hel", "lo"}},
//	)
//	c, _ := openai.New(openai.Options{BaseURL: srv.URL()})
//	...
//	srv.ChatRequests()[1].Messages // what the client sent
//
// Each chat request takes the next queued [Reply], else asks the
// [Server.Handle] func. A Reply covers the behaviours of real servers the
// client must survive (llm-backends.md §4): fragmented reasoning and text,
// tool-call arguments cut anywhere, parallel and Ollama-style calls, usage
// placements, every finish reason, HTTP errors with Retry-After, broken
// streams, in-stream errors, slow first tokens, keep-alive comments,
// awkward SSE framing, non-streaming JSON bodies, and answers that never
// end ([Flood]: text, reasoning, tool calls or one endless event). [Server.ValidateDeepSeek]
// adds DeepSeek's 400s for requests it would refuse.
//
// The server's goroutines are net/http's; [Server.Close] ends streams that
// would otherwise run forever (holds, endless keep-alives) and returns
// once every handler has.
package openaitest
