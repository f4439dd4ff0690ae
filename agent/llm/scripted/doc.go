// Package scripted is a deterministic [llm.Model] driven by a JSON script:
// `dshd --model scripted:FILE`, `make demo`, end-to-end tests and
// benchmarks run the whole agent offline with it. [Default] echoes the
// user ("You said: ...") so `dshd --model scripted` works with no file.
//
// # Script format
//
// A script is an object with "rules" (or just the array of rules). Each
// call is answered by the first rule whose conditions all hold; a call no
// rule matches fails with [ErrNoRule], naming the last user text. Replies
// are chosen by matching the request, never by call order, so a parent
// agent and its parallel subagents can share one model and stay
// deterministic.
//
// Conditions (all optional):
//
//	user     regexp on the text of the last user message
//	step     number of assistant messages after that user message
//	         (0 = first call of the turn, 1 = after the first tool round...)
//	tool     regexp on the last tool result after that user message
//	system   regexp on the system prompt
//
// Reply:
//
//	reasoning     streamed as reasoning ("" = present but empty)
//	text          streamed as the answer
//	toolCalls     [{"name": ..., "arguments": <any JSON>, "id": optional}]
//	finish        stop | length | tool_calls | content_filter
//	              (default: tool_calls with toolCalls, else stop)
//	usage         {"input": N, "output": N} (default: runes/4)
//	error         fail the call with this message (after reasoning/text);
//	              errorStatus and retryable shape the *llm.APIError
//	delayMs       wait before the first event
//	chunkDelayMs  wait between streamed pieces
//	chunk         piece size in runes (default 16)
//	hang          after the text, block until the call is cancelled
//
// In reasoning, text, error and every string inside arguments, {{user}},
// {{tool}} and {{step}} are replaced (once, no re-scan) by the last user
// text, the last tool result and the step. Arguments go out as their JSON
// text; a JSON string goes out as its content, verbatim, so a script can
// send arguments that are not JSON at all.
//
// Tool call ids default to call_<turn>_<step>_<n>, where turn counts the
// user messages: unique within a session, identical across runs.
//
// Example (testdata/tools.json):
//
//	{"rules": [
//	  {"user": "(?i)read (\\S+)", "step": 0,
//	   "reasoning": "The user wants a file read.",
//	   "text": "Reading it.",
//	   "toolCalls": [{"name": "read_file", "arguments": {"path": "README.md"}}]},
//	  {"user": "(?i)read", "step": 1, "tool": ".",
//	   "text": "The file starts with: {{tool}}"},
//	  {"text": "You said: {{user}}"}
//	]}
//
// [Options.Instant] (or [Model.Instant]) drops every delay and streams in
// one piece, for benchmarks. A Model keeps no state and starts no
// goroutines; Stream honours ctx at every wait.
package scripted
