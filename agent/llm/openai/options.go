// Options, per-backend capability flags and presets of the client.

package openai

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/dshd/dshd/internal/settingnames"
)

// Defaults applied by [New] to zero fields of [Options].
const (
	DefaultBaseURL           = "https://api.deepseek.com"
	DefaultModel             = "deepseek-flash"
	DefaultMaxRetries        = 3
	DefaultRetryBaseDelay    = 500 * time.Millisecond
	DefaultRetryMaxDelay     = 10 * time.Second
	DefaultConnectTimeout    = 30 * time.Second
	DefaultFirstByteTimeout  = time.Minute
	DefaultFirstTokenTimeout = 10 * time.Minute
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultDoneTimeout       = 10 * time.Second
	DefaultCallTimeout       = 15 * time.Minute
	// DefaultMaxAnswerBytes is far above any real answer: DeepSeek caps
	// the output at 64K tokens beside the reasoning, and half a million
	// tokens of answer and reasoning together, at four bytes a token
	// (code, CJK text), come to 2 MiB; four times that leaves room for
	// models with longer outputs. A server that streams without end is
	// stopped at 8 MiB of answer instead of growing until the call
	// timeout, gigabytes later. Not higher: the agent holds a few copies
	// of an answer's text while it streams, so a flooded answer costs
	// about nine times the bound in RSS (≈74 MB at 8 MiB, ≈290 MB at 32).
	DefaultMaxAnswerBytes = 8 << 20
)

// maxRetryAfter bounds how long a retry waits on a server's Retry-After; a
// longer wait is returned to the caller as the error instead, saying how
// long the server asked for. A wait is logged, never silent.
const maxRetryAfter = 30 * time.Second

// APIKey is a secret. It prints and logs as "REDACTED" so that options can be
// logged whole; [APIKey.Reveal] is the only way to read it.
type APIKey string

const redacted = "REDACTED"

// Reveal returns the key itself.
func (k APIKey) Reveal() string { return string(k) }

// String redacts the key.
func (k APIKey) String() string {
	if k == "" {
		return ""
	}
	return redacted
}

// GoString redacts the key from %#v.
func (k APIKey) GoString() string { return `"` + k.String() + `"` }

// LogValue redacts the key from slog output.
func (k APIKey) LogValue() slog.Value { return slog.StringValue(k.String()) }

// MarshalText redacts the key from JSON and text encodings, so a dumped
// configuration never carries it.
func (k APIKey) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// ThinkingStyle is how a backend turns the model's thinking on and off.
type ThinkingStyle uint8

// Thinking styles.
const (
	// ThinkingNone sends nothing: the server's default applies.
	ThinkingNone ThinkingStyle = iota
	// ThinkingObject sends DeepSeek's "thinking": {"type": "enabled"|"disabled"},
	// plus "reasoning_effort" when [Options.ReasoningEffort] is set.
	ThinkingObject
	// ThinkingEffort sends "reasoning_effort" (OpenAI reasoning models) when
	// [Options.ReasoningEffort] is set and thinking is not disabled.
	ThinkingEffort
)

// Compat describes what one OpenAI-compatible server wants, so the client
// never guesses from the URL (llm-backends.md §2.6, §2.7).
type Compat struct {
	// EchoReasoning sends each assistant message's stored reasoning back to
	// the server, verbatim, "" included (DeepSeek requires it on every
	// assistant message of a tool loop).
	EchoReasoning bool
	// ReasoningField names the echoed field; "" means "reasoning_content".
	ReasoningField string
	// ReasoningPlaceholder, when EchoReasoning is set, is sent for an
	// assistant message that has tool calls but no stored reasoning (a
	// history written by another backend). Nil omits the field.
	ReasoningPlaceholder *string
	// Thinking is how thinking is toggled.
	Thinking ThinkingStyle
	// MaxTokensField names the output cap field; "" means "max_tokens"
	// (OpenAI reasoning models want "max_completion_tokens").
	MaxTokensField string
	// SendStreamOptions sends "stream_options": {"include_usage": true}.
	// Some strict servers reject unknown fields; most need it for usage.
	SendStreamOptions bool
	// ParallelToolCalls sends "parallel_tool_calls": true when tools are
	// offered (llama.cpp needs it to emit more than one call).
	ParallelToolCalls bool
}

func ptr[T any](v T) *T { return &v }

// DeepSeekCompat is the capability set of api.deepseek.com.
func DeepSeekCompat() Compat {
	return Compat{
		EchoReasoning:        true,
		ReasoningField:       "reasoning_content",
		ReasoningPlaceholder: ptr(""),
		Thinking:             ThinkingObject,
		MaxTokensField:       "max_tokens",
		SendStreamOptions:    true,
	}
}

// Options configure a [Client]. Every zero field takes the documented
// default; [New] copies the options, so later changes have no effect.
type Options struct {
	// BaseURL is the API root; "/chat/completions" and "/models" are
	// appended. Zero: https://api.deepseek.com.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer"; empty sends no header.
	APIKey APIKey
	// KeySource says where APIKey came from ("DEEPSEEK_API_KEY"), or why
	// none is sent; a refused key (HTTP 401) names it, so the user knows
	// which setting to fix. Empty names nothing.
	KeySource string
	// DefaultModel is used when a request names no model. Zero: with a nil
	// Compat (DeepSeek) "deepseek-flash"; otherwise the first id of
	// GET /models, fetched once (local servers serve what they loaded).
	DefaultModel string
	// HTTPClient sends the requests. Zero: a client of its own whose
	// transport uses ConnectTimeout. Its Timeout must be 0 (it would cut
	// streams); the timeouts below are enforced per call instead.
	HTTPClient *http.Client
	// Compat is the server's capability set. Nil: [DeepSeekCompat]. A
	// non-nil Compat is used as it is.
	Compat *Compat
	// DisableThinking turns thinking off where Compat.Thinking can say so.
	// Thinking is on by default.
	DisableThinking bool
	// ReasoningEffort ("low", "high", "max" for DeepSeek) is sent with a
	// thinking style that supports it; empty leaves the server's default.
	ReasoningEffort string
	// ExtraHeaders are added to every request.
	ExtraHeaders map[string]string
	// ExtraBody fields are merged into the top level of every chat request
	// body (for server-specific parameters such as "user_id").
	ExtraBody map[string]any

	// MaxRetries is how many times a failed call is sent again, only ever
	// before any of its body was read: on connection errors and on HTTP
	// 408, 429 (not insufficient_quota), 500, 502, 503 and 504. Zero: 3;
	// negative: never.
	MaxRetries int
	// RetryBaseDelay is the first backoff; it doubles per retry, with
	// jitter, up to RetryMaxDelay. A server's Retry-After replaces it.
	// Zero: 500ms and 10s.
	RetryBaseDelay time.Duration
	RetryMaxDelay  time.Duration

	// ConnectTimeout bounds dialing (and TLS) when HTTPClient is zero.
	// Zero: 30s.
	ConnectTimeout time.Duration
	// FirstByteTimeout bounds how long the server may send nothing: from
	// the request to its response headers, and from the headers to the
	// first byte of the body (a keep-alive comment counts). A server that
	// is down, or a proxy that holds the stream, fails the call in that
	// time instead of after minutes. GET /models gets as long in all.
	// Zero: 1m.
	FirstByteTimeout time.Duration
	// FirstTokenTimeout bounds the wait from the response headers to the
	// first data event; keep-alive comments do not count as data (DeepSeek
	// may queue a request for 10 minutes, sending only comments). Zero: 10m.
	FirstTokenTimeout time.Duration
	// IdleTimeout bounds the silence between two data events; keep-alive
	// comments do not reset it, so a stream that only pings fails. Time
	// spent by the consumer between two events does not count. Zero: 2m.
	IdleTimeout time.Duration
	// DoneTimeout bounds the wait for the usage chunk and "[DONE]" after
	// the finish reason; when it expires the call still succeeds. Zero: 10s.
	DoneTimeout time.Duration
	// CallTimeout caps one whole call, retries included. Zero: 15m.
	CallTimeout time.Duration
	// For every timeout above, a negative value disables it.

	// MaxAnswerBytes bounds one answer: the bytes of its text, reasoning
	// and tool calls (ids, names, arguments) a call has taken so far,
	// which is what the call and its consumer hold of it, so that a
	// server that streams without end (a looping model, a hostile server)
	// costs a bounded amount of memory. What carries one answer — one
	// event of a stream (a line, or the data lines of one event), the body
	// of a non-streamed answer — may take twice as many bytes (JSON
	// escapes, the envelope), and so may the list of models. A call over
	// either fails with [ErrAnswerTooLong] naming Settings.MaxAnswerBytes,
	// is not retried (the server would stream the same again) and is
	// logged once per client; a list over it fails [Client.Models],
	// naming the setting too. Zero: [DefaultMaxAnswerBytes].
	MaxAnswerBytes int

	// Settings name the bounds above in the error of a call that ran
	// out of one (the daemon's flags), so that it says which to raise.
	Settings Settings

	// Logger receives retries and failures. Nil: discard.
	Logger *slog.Logger
}

// Settings name the timeouts and the answer bound of [Options] in the
// error of a call that ran out of one, one field for each of the same
// name; an empty field is that name. (DoneTimeout has none: a call that
// runs out of it still succeeds.)
type Settings struct {
	FirstByteTimeout, FirstTokenTimeout, IdleTimeout, CallTimeout string
	MaxAnswerBytes                                                string
}

// said is the error of a timeout that ran out after d: err with d and the
// setting that changes it.
func said(err error, d time.Duration, setting string) error {
	return fmt.Errorf("%w (%s; %s sets it)", err, d, setting)
}

// DeepSeek returns the options of the DeepSeek API: thinking on, reasoning
// echoed, usage requested. It equals the zero Options, spelled out.
func DeepSeek() Options {
	c := DeepSeekCompat()
	return Options{BaseURL: DefaultBaseURL, DefaultModel: DefaultModel, Compat: &c}
}

// OpenAI returns the options of api.openai.com: no reasoning in Chat
// Completions, "max_completion_tokens", "reasoning_effort" when set.
func OpenAI() Options {
	return Options{
		BaseURL:      "https://api.openai.com/v1",
		DefaultModel: "gpt-5-mini",
		Compat: &Compat{
			Thinking:          ThinkingEffort,
			MaxTokensField:    "max_completion_tokens",
			SendStreamOptions: true,
		},
	}
}

// Ollama returns the options of a local Ollama /v1 endpoint. Ollama wants
// a non-empty key and ignores it; its reasoning field is "reasoning". The
// model is discovered from GET /models unless DefaultModel is set.
func Ollama() Options {
	return Options{
		BaseURL: "http://localhost:11434/v1",
		APIKey:  "ollama",
		Compat: &Compat{
			ReasoningField:    "reasoning",
			SendStreamOptions: true,
		},
	}
}

// VLLM returns the options of a local vLLM server (reasoning arrives as
// "reasoning"; tools need the server's --enable-auto-tool-choice flags).
func VLLM() Options {
	return Options{
		BaseURL: "http://localhost:8000/v1",
		Compat: &Compat{
			ReasoningField:    "reasoning",
			SendStreamOptions: true,
		},
	}
}

// LlamaCpp returns the options of a local llama-server: reasoning as
// "reasoning_content", "parallel_tool_calls" needed for several calls.
func LlamaCpp() Options {
	return Options{
		BaseURL: "http://localhost:8080/v1",
		Compat: &Compat{
			ReasoningField:    "reasoning_content",
			SendStreamOptions: true,
			ParallelToolCalls: true,
		},
	}
}

// OpenRouter returns the options of openrouter.ai, which always sends usage
// (include_usage is deprecated there) and its reasoning as "reasoning".
func OpenRouter() Options {
	return Options{
		BaseURL:      "https://openrouter.ai/api/v1",
		DefaultModel: "deepseek/deepseek-v4.1-flash",
		Compat: &Compat{
			ReasoningField: "reasoning",
		},
	}
}

// Generic returns the options of an OpenAI-compatible server the client
// knows nothing more about: no thinking switch, no reasoning sent back,
// usage requested, reasoning read under either name. It has no base URL.
func Generic() Options {
	return Options{Compat: &Compat{SendStreamOptions: true}}
}

// GenericPreset is the name of [Generic] among the presets.
const GenericPreset = "openai-compatible"

// A preset is a named backend: its options and the environment variable
// its API key is read from ("" for servers without keys).
type preset struct {
	name    string
	options func() Options
	keyEnv  string
}

var presets = []preset{
	{"deepseek", DeepSeek, "DEEPSEEK_API_KEY"},
	{"openai", OpenAI, "OPENAI_API_KEY"},
	{"openrouter", OpenRouter, "OPENROUTER_API_KEY"},
	{"ollama", Ollama, ""},
	{"vllm", VLLM, ""},
	{"llamacpp", LlamaCpp, ""},
	{GenericPreset, Generic, ""},
}

// PresetNames lists the backends [PresetFor] knows, DeepSeek first.
func PresetNames() []string {
	names := make([]string, len(presets))
	for i, p := range presets {
		names[i] = p.name
	}
	return names
}

// PresetFor picks a client's options and the environment variable its key
// is read from. A named backend keeps its behaviour whatever baseURL says:
// DeepSeek behind a proxy or gateway still gets DeepSeek's key variable,
// thinking switch and reasoning passback. Without a name, a baseURL on a
// DeepSeek host (or none) means DeepSeek and any other means [Generic],
// since nothing says that server is DeepSeek. A non-empty baseURL replaces
// the preset's.
func PresetFor(name, baseURL string) (opts Options, keyEnv string, err error) {
	name = PresetName(name, baseURL)
	for _, p := range presets {
		if p.name != name {
			continue
		}
		opts = p.options()
		if baseURL != "" {
			opts.BaseURL = baseURL
		}
		if opts.BaseURL == "" {
			return Options{}, "", fmt.Errorf("backend %s needs the server's base URL", name)
		}
		return opts, p.keyEnv, nil
	}
	return Options{}, "", fmt.Errorf("unknown backend %q (known: %s)", name, strings.Join(PresetNames(), ", "))
}

// SwitchesThinking reports whether a client of o can turn thinking on
// and off per request (DeepSeek's thinking object), as
// [Client.ThinkingSwitch] does, before any client exists: a thinking
// setting for a server without the switch would change nothing.
func (o Options) SwitchesThinking() bool { return resolve(o).compat.Thinking == ThinkingObject }

// PresetName is the preset [PresetFor] uses for name and baseURL: name
// when given, else deepseek, or [GenericPreset] for a URL off DeepSeek's
// host.
func PresetName(name, baseURL string) string {
	switch {
	case name != "":
		return name
	case baseURL != "" && !deepSeekHost(baseURL):
		return GenericPreset
	}
	return "deepseek"
}

// deepSeekHost reports whether rawURL points at DeepSeek's own API.
func deepSeekHost(rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	h := strings.ToLower(u.Hostname())
	return h == "deepseek.com" || strings.HasSuffix(h, ".deepseek.com")
}

// resolved holds the options with every default applied.
type resolved struct {
	Options
	compat        Compat
	discoverModel bool
}

func pick(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0 // disabled
	}
	return d
}

func resolve(o Options) resolved {
	r := resolved{Options: o}
	if o.Compat == nil {
		r.compat = DeepSeekCompat()
		if r.DefaultModel == "" {
			r.DefaultModel = DefaultModel
		}
	} else {
		r.compat = *o.Compat
		r.discoverModel = r.DefaultModel == ""
	}
	if r.compat.ReasoningField == "" {
		r.compat.ReasoningField = "reasoning_content"
	}
	if r.compat.MaxTokensField == "" {
		r.compat.MaxTokensField = "max_tokens"
	}
	if r.BaseURL == "" {
		r.BaseURL = DefaultBaseURL
	}
	switch {
	case r.MaxRetries == 0:
		r.MaxRetries = DefaultMaxRetries
	case r.MaxRetries < 0:
		r.MaxRetries = 0
	}
	r.RetryBaseDelay = pick(r.RetryBaseDelay, DefaultRetryBaseDelay)
	r.RetryMaxDelay = pick(r.RetryMaxDelay, DefaultRetryMaxDelay)
	r.ConnectTimeout = pick(r.ConnectTimeout, DefaultConnectTimeout)
	r.FirstByteTimeout = pick(r.FirstByteTimeout, DefaultFirstByteTimeout)
	r.FirstTokenTimeout = pick(r.FirstTokenTimeout, DefaultFirstTokenTimeout)
	r.IdleTimeout = pick(r.IdleTimeout, DefaultIdleTimeout)
	r.DoneTimeout = pick(r.DoneTimeout, DefaultDoneTimeout)
	r.CallTimeout = pick(r.CallTimeout, DefaultCallTimeout)
	if r.MaxAnswerBytes <= 0 {
		r.MaxAnswerBytes = DefaultMaxAnswerBytes
	}
	if r.Logger == nil {
		r.Logger = slog.New(slog.DiscardHandler)
	}
	settingnames.Fill(&r.Settings)
	// Copy the maps so the caller cannot change them under us.
	if o.ExtraHeaders != nil {
		r.ExtraHeaders = make(map[string]string, len(o.ExtraHeaders))
		for k, v := range o.ExtraHeaders {
			r.ExtraHeaders[k] = v
		}
	}
	if o.ExtraBody != nil {
		r.ExtraBody = make(map[string]any, len(o.ExtraBody))
		for k, v := range o.ExtraBody {
			r.ExtraBody[k] = v
		}
	}
	return r
}
