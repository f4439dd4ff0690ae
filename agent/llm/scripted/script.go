// The script: rules, their JSON form, loading and validation.

package scripted

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"

	"github.com/dshd/dshd/agent/llm"
)

// Script is an ordered list of rules; the first rule whose conditions all
// hold answers a call.
type Script struct {
	Rules []Rule `json:"rules"`
	// Model is the model id the script answers as; "" means "scripted".
	Model string `json:"model,omitempty"`
	// ContextWindow is reported by Models; 0 means 128000.
	ContextWindow int `json:"contextWindow,omitempty"`
}

// Rule is one condition-and-reply pair. Empty conditions always hold.
type Rule struct {
	// User is a regexp matched against the text of the conversation's last
	// user message.
	User string `json:"user,omitempty"`
	// Step, when set, must equal the number of assistant messages after
	// that last user message (0 for the first call of a turn).
	Step *int `json:"step,omitempty"`
	// Tool is a regexp matched against the content of the last tool result
	// after the last user message ("" when there is none).
	Tool string `json:"tool,omitempty"`
	// System is a regexp matched against the system prompt (every system
	// message, joined with newlines).
	System string `json:"system,omitempty"`

	// Reasoning is streamed as reasoning; "" (not absent) streams an empty
	// reasoning, as a thinking model that answered directly.
	Reasoning *string `json:"reasoning,omitempty"`
	// Text is streamed as the answer.
	Text string `json:"text,omitempty"`
	// ToolCalls are yielded after the text.
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	// Finish is stop, length, tool_calls or content_filter; "" means
	// tool_calls when ToolCalls are set, else stop.
	Finish string `json:"finish,omitempty"`
	// Usage is reported as given; nil counts runes/4 as tokens.
	Usage *Usage `json:"usage,omitempty"`
	// Error fails the call with this message, after streaming Reasoning
	// and Text if any. ErrorStatus and Retryable shape the *llm.APIError.
	Error       string `json:"error,omitempty"`
	ErrorStatus int    `json:"errorStatus,omitempty"`
	Retryable   bool   `json:"retryable,omitempty"`
	// DelayMs waits before the first event; ChunkDelayMs between chunks.
	DelayMs      int `json:"delayMs,omitempty"`
	ChunkDelayMs int `json:"chunkDelayMs,omitempty"`
	// Chunk is the size, in runes, of the streamed pieces; 0 means 16.
	Chunk int `json:"chunk,omitempty"`
	// Hang blocks after the text until the call's ctx is cancelled.
	Hang bool `json:"hang,omitempty"`
}

// ToolCall is a tool call a rule makes.
type ToolCall struct {
	// ID is the call's id; "" derives a deterministic one from the turn,
	// the step and the call's position.
	ID   string `json:"id,omitempty"`
	Name string `json:"name"`
	// Arguments is any JSON value, sent as its JSON text; a JSON string is
	// sent as its content verbatim (so a script can send invalid JSON).
	// Absent means {}.
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// Usage is a rule's token usage.
type Usage struct {
	Input  int64 `json:"input"`
	Output int64 `json:"output"`
}

// Ptr returns a pointer to v, for Rule.Step and Rule.Reasoning in Go.
func Ptr[T any](v T) *T { return &v }

// ErrBadScript is wrapped by every error about a script's content.
var ErrBadScript = errors.New("scripted: bad script")

type compiled struct {
	Rule
	user, tool, system *regexp.Regexp
	finish             llm.FinishReason
	args               []string // arguments text per tool call, before substitution
	argIsString        []bool
}

func compileRE(i int, field, expr string) (*regexp.Regexp, error) {
	if expr == "" {
		return nil, nil
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("%w: rule %d: %s: %w", ErrBadScript, i, field, err)
	}
	return re, nil
}

func compile(s *Script) ([]compiled, error) {
	out := make([]compiled, len(s.Rules))
	for i, r := range s.Rules {
		c := compiled{Rule: r}
		var err error
		if c.user, err = compileRE(i, "user", r.User); err != nil {
			return nil, err
		}
		if c.tool, err = compileRE(i, "tool", r.Tool); err != nil {
			return nil, err
		}
		if c.system, err = compileRE(i, "system", r.System); err != nil {
			return nil, err
		}
		switch r.Finish {
		case "":
			c.finish = llm.FinishStop
			if len(r.ToolCalls) > 0 {
				c.finish = llm.FinishToolCalls
			}
		case "stop", "length", "tool_calls", "content_filter":
			c.finish = llm.FinishReason(r.Finish)
		default:
			return nil, fmt.Errorf("%w: rule %d: unknown finish %q", ErrBadScript, i, r.Finish)
		}
		if r.Chunk < 0 || r.DelayMs < 0 || r.ChunkDelayMs < 0 {
			return nil, fmt.Errorf("%w: rule %d: negative chunk or delay", ErrBadScript, i)
		}
		for j, tc := range r.ToolCalls {
			if tc.Name == "" {
				return nil, fmt.Errorf("%w: rule %d: tool call %d has no name", ErrBadScript, i, j)
			}
			raw := bytes.TrimSpace(tc.Arguments)
			switch {
			case len(raw) == 0:
				c.args = append(c.args, "{}")
				c.argIsString = append(c.argIsString, false)
			case !json.Valid(raw):
				return nil, fmt.Errorf("%w: rule %d: tool call %d: arguments are not JSON", ErrBadScript, i, j)
			default:
				var compact bytes.Buffer
				_ = json.Compact(&compact, raw)
				c.args = append(c.args, compact.String())
				c.argIsString = append(c.argIsString, raw[0] == '"')
			}
		}
		out[i] = c
	}
	return out, nil
}

// ParseScript decodes a script: an object {"rules": [...], ...} or a bare
// array of rules. Unknown fields are errors, so a typo never silently
// turns a condition off.
func ParseScript(data []byte) (Script, error) {
	var s Script
	data = bytes.TrimSpace(data)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var err error
	if len(data) > 0 && data[0] == '[' {
		err = dec.Decode(&s.Rules)
	} else {
		err = dec.Decode(&s)
	}
	if err != nil {
		return Script{}, fmt.Errorf("%w: %w", ErrBadScript, err)
	}
	if dec.More() {
		return Script{}, fmt.Errorf("%w: data after the script", ErrBadScript)
	}
	return s, nil
}

// Parse decodes a script and returns its model.
func Parse(data []byte) (*Model, error) {
	s, err := ParseScript(data)
	if err != nil {
		return nil, err
	}
	return New(s, nil)
}

// Load reads a script file and returns its model.
func Load(path string) (*Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scripted: %w", err)
	}
	m, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// DefaultScript echoes the user: "You said: {{user}}".
func DefaultScript() Script {
	return Script{Rules: []Rule{{Text: "You said: {{user}}"}}}
}

// Default returns the model of [DefaultScript], so `dshd --model scripted`
// works without a file.
func Default() *Model {
	m, err := New(DefaultScript(), nil)
	if err != nil {
		panic(err) // the default script is valid by construction
	}
	return m
}
