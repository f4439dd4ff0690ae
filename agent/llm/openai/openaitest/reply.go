// Reply: what the fake server answers to one chat request.

package openaitest

import (
	"net/http"
	"time"
)

// Reply scripts the answer to one chat request. The zero Reply streams an
// empty answer that finishes with "stop". Fields combine freely: a reply
// can stream reasoning, text and tool calls, then break the stream.
type Reply struct {
	// Status, when set and not 200, answers with that HTTP status and a
	// DeepSeek-shaped error body (see Error and Body) instead of a stream.
	Status int
	// Error overrides the error object of an HTTP error, or of the
	// in-stream error event when ErrorEvent is set.
	Error *Error
	// Body, when set, is the verbatim body of an HTTP error.
	Body string
	// RetryAfter is sent as the Retry-After header verbatim ("2", or an
	// HTTP date from [HTTPDate]).
	RetryAfter string
	// Header holds extra response headers.
	Header http.Header

	// Reasoning is streamed in these fragments before the text. A single
	// "" fragment streams an empty reasoning (field present, no text).
	Reasoning []string
	// ReasoningField spells the reasoning field: "reasoning_content"
	// (default, DeepSeek) or "reasoning" (Ollama, vLLM, OpenRouter).
	ReasoningField string
	// Text is streamed in these fragments.
	Text []string
	// ToolCalls are streamed after the text, laid out by ToolLayout.
	ToolCalls  []ToolCall
	ToolLayout Layout

	// Finish is the finish_reason; "" means "tool_calls" when ToolCalls are
	// set, else "stop". Any string is sent as is.
	Finish string
	// NoFinish leaves the finish chunk out (a truncated stream).
	NoFinish bool
	// NoDone leaves "data: [DONE]" out.
	NoDone bool
	// Usage is the usage reported; nil computes one from the sizes.
	Usage *Usage
	// UsageAt says where the usage goes; see [UsagePlacement].
	UsageAt UsagePlacement

	// Disconnect closes the TCP connection abruptly (hijack) after
	// DisconnectAfter data events, without finishing the HTTP response.
	Disconnect      bool
	DisconnectAfter int
	// ErrorEvent sends data: {"error": ...} (Error, or a default) after the
	// text and closes the stream without finishing it.
	ErrorEvent bool

	// Hold, when non-nil, delays the first data event until it is closed
	// (or the client goes away), sending keep-alive comments every
	// KeepAliveInterval meanwhile when that is set.
	Hold <-chan struct{}
	// FirstDelay delays the first data event by a duration, with the same
	// keep-alives as Hold.
	FirstDelay time.Duration
	// HoldHeaders makes Hold and FirstDelay happen before the response
	// headers are sent (a server still loading its model), without pings.
	HoldHeaders bool
	// Delay waits between two data events.
	Delay time.Duration
	// KeepAliveInterval is the period of keep-alive comments during Hold
	// and FirstDelay (zero: none) and KeepAliveForever (zero: 10ms).
	KeepAliveInterval time.Duration
	// KeepAlives writes that many keep-alive comments and blank lines
	// before the first event and after every event.
	KeepAlives int
	// KeepAliveForever, after the last event, sends keep-alive comments
	// until the client goes away: the stream never ends by itself.
	KeepAliveForever bool
	// Comment is the keep-alive comment line; "" means ": keep-alive".
	Comment string

	// CRLF ends lines with "\r\n".
	CRLF bool
	// NoSpace writes "data:" without the space.
	NoSpace bool
	// SplitWrites writes each event in three pieces, flushing each.
	SplitWrites bool
	// MultiLine spreads each event's JSON over several "data:" lines.
	MultiLine bool
	// SSEFields adds "event:", "id:" and "retry:" lines, which clients
	// must ignore.
	SSEFields bool

	// Flood, when set, makes the answer go on without end after the
	// content above, which then has no finish (see [Flood]); the failure
	// fields above do not apply to it.
	Flood *Flood

	// Raw, when set, is written verbatim as the whole text/event-stream
	// body (malformed streams); only the failure and timing fields above
	// still apply.
	Raw string

	// JSON answers with one non-streaming JSON completion even when the
	// request asked for a stream; KeepAlives blank lines precede it. A
	// request with "stream": false always gets JSON.
	JSON bool
}

// Layout is how tool calls are laid out in the stream.
type Layout uint8

// Tool-call layouts.
const (
	// Sequential opens each call (id, name, empty arguments) then streams
	// its argument fragments, one call after the other.
	Sequential Layout = iota
	// Interleaved opens every call first, then streams their argument
	// fragments round-robin.
	Interleaved
	// Whole sends each call complete in one chunk, every call at index 0
	// unless ToolCall.Index says otherwise (Ollama).
	Whole
)

// ToolCall is a tool call to stream.
type ToolCall struct {
	// ID is the call id; "" sends none.
	ID string
	// NumericID sends ID (which must be digits) as a JSON number.
	NumericID bool
	// Index overrides the call's index (its position by default).
	Index *int
	// NoIndex omits the index field.
	NoIndex bool
	// RepeatName sends the name again in every fragment.
	RepeatName bool
	Name       string
	// Arguments is the arguments text.
	Arguments string
	// Split lists byte offsets of Arguments at which it is cut into
	// fragments, anywhere: inside strings, escapes or a multi-byte UTF-8
	// character (the bytes go out raw, unvalidated). Nil: one fragment.
	Split []int
	// Chunks, when set, replaces Arguments/Split: each is the text between
	// the quotes of one fragment's JSON string, written verbatim (so a
	// test can cut between the two \u escapes of a surrogate pair).
	Chunks []string
}

// Usage is a usage object in DeepSeek's shape. CacheHit also fills
// prompt_tokens_details.cached_tokens.
type Usage struct {
	PromptTokens     int64
	CompletionTokens int64
	TotalTokens      int64 // zero: prompt + completion
	CacheHit         int64
	CacheMiss        int64 // zero: prompt - hit
	ReasoningTokens  int64
}

// UsagePlacement says where the usage object is sent.
type UsagePlacement uint8

// Usage placements.
const (
	// UsageChunk sends a last chunk with "choices": [] and the usage, only
	// when the request set stream_options.include_usage (the OpenAI rule).
	UsageChunk UsagePlacement = iota
	// UsageChoicesNull is UsageChunk with "choices": null.
	UsageChoicesNull
	// UsageOnFinish puts the usage on the finish chunk, always.
	UsageOnFinish
	// UsageEveryChunk puts a growing usage on every chunk, always.
	UsageEveryChunk
	// UsageNone sends no usage at all.
	UsageNone
)

// Error is an error object as DeepSeek and OpenAI send it. Code may be a
// string or (OpenRouter) a number.
type Error struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Param   any    `json:"param"`
	Code    any    `json:"code"`
}

// HTTPDate formats t for a Retry-After header.
func HTTPDate(t time.Time) string { return t.UTC().Format(http.TimeFormat) }

// Text returns a reply streaming text in the given fragments.
func Text(fragments ...string) Reply { return Reply{Text: fragments} }

// Status returns an HTTP error reply with DeepSeek's body for that status.
func Status(code int) Reply { return Reply{Status: code} }

// defaultError is DeepSeek's error object for a status.
func defaultError(status int) *Error {
	e := &Error{Type: "invalid_request_error", Code: "invalid_request_error"}
	switch status {
	case 400:
		e.Message = "Invalid request"
	case 401:
		e.Message = "Authentication Fails, Your api key: ****abcd is invalid"
		e.Type = "authentication_error"
	case 402:
		e.Message = "Insufficient Balance"
		e.Type = "unknown_error"
	case 422:
		e.Message = "Invalid parameter: temperature must be between 0 and 2"
	case 429:
		e.Message = "Rate limit reached for requests"
		e.Type, e.Code = "rate_limit_error", "rate_limit_reached"
	case 500:
		e.Message = "Internal server error"
		e.Type, e.Code = "server_error", "server_error"
	case 503:
		e.Message = "Server overloaded, please try again later"
		e.Type, e.Code = "server_error", "server_overloaded"
	default:
		e.Message = http.StatusText(status)
	}
	return e
}
