// This file holds the helpers that turn a child's end into the seam's
// Result: bounds, credential scrubbing, the idle state and structured
// answers.

package runkit

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dshd/dshd/internal/outputschema"
	"github.com/dshd/dshd/internal/secret"
	"github.com/dshd/dshd/internal/utf8cut"
	"github.com/dshd/dshd/subagents"
)

// MaxDiagnostic is the most bytes of a Result's Diagnostic: it explains a
// failure to people and is not a log dump.
const MaxDiagnostic = 4 << 10

// Cut shortens s to at most n bytes, ending with "…" on a character
// boundary when it had to cut.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return utf8cut.Prefix(s, n-len("…")) + "…"
}

// FirstLine returns s up to its first newline.
func FirstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// The parts of a credential both scrubbers recognise: a key naming a
// secret (followed by its value) — one [secret.Name] takes for a
// credential's, or an Authorization header —, an HTTP auth scheme with
// its credentials, and well-known key prefixes.
var secretKey = `(` + secret.KeyPattern() + `|authorization)`

const (
	authScheme   = `(bearer|basic)\s+\S+`
	keyPrefix    = `\b(sk|pk|rk|ghp|gho|ghs|xox[abp])[-_][A-Za-z0-9_\-]{6,}`
	optionalAuth = `((bearer|basic)\s+)?`
)

// The patterns are compiled on first use: a daemon that never scrubs
// anything does not pay for them at start.
var (
	messageSecrets = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)(` + secretKey + `\s*[:=]\s*` + optionalAuth + `\S+|` + authScheme + `|` + keyPrefix + `|[A-Za-z0-9_\-+/=]{24,})`)
	})
	outputSecrets = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)(` + secretKey + `["']?\s*[:=]\s*["']?` + optionalAuth + `[^\s"',]+|` + authScheme + `|` + keyPrefix + `|[A-Za-z0-9_\-+=]{32,})`)
	})
)

// ScrubMessage trims s and replaces whatever could be a credential in it
// with "[redacted]": a value after a key naming a secret (to the next
// space), bearer and basic credentials, well-known key prefixes, and runs
// of 24 or more key-like characters, '/' included, as in base64. It suits
// error messages of this process, which hold no paths worth keeping.
func ScrubMessage(s string) string {
	return messageSecrets().ReplaceAllString(strings.TrimSpace(s), "[redacted]")
}

// ScrubOutput is [ScrubMessage] for what another program wrote (its error
// answers, its stderr): a key may be quoted, as in JSON, and its value
// ends at a quote or comma; a key-like run must be 32 characters long and
// stops at '/', so file paths in the text survive.
func ScrubOutput(s string) string {
	return outputSecrets().ReplaceAllString(strings.TrimSpace(s), "[redacted]")
}

// IdleState is the state an exposed child goes to when a run ended with
// res: idle, with the stop reason, the usage, and the diagnostic of a
// failure.
func IdleState(res subagents.Result) subagents.State {
	usage := res.Usage
	st := subagents.State{State: subagents.StateIdle, StopReason: res.StopReason, Usage: &usage}
	if res.StopReason == subagents.StopError {
		st.Error = res.Diagnostic
	}
	return st
}

// Invalid is the seam's invalid-request error ([subagents.ErrInvalidRequest])
// with its message: a request a provider cannot serve.
func Invalid(format string, args ...any) error {
	return &subagents.Error{Code: subagents.CodeInvalidRequest, Message: fmt.Sprintf(format, args...)}
}

// RequestSchema compiles a start request's output schema: nil for a
// request without one; one that does not compile makes the request
// invalid. A schema its binding holds is compiled already
// ([outputschema.Compile]).
func RequestSchema(raw json.RawMessage) (*jsonschema.Resolved, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	schema, err := outputschema.Compile(raw)
	if err != nil {
		return nil, Invalid("output schema: %v", err)
	}
	return schema, nil
}

// Structured reads a final answer as JSON, tolerating a code fence around
// it, and validates it against schema.
func Structured(schema *jsonschema.Resolved, answer string) (json.RawMessage, error) {
	text := strings.TrimSpace(answer)
	if body, ok := strings.CutPrefix(text, "```"); ok {
		if i := strings.IndexByte(body, '\n'); i >= 0 {
			body = body[i+1:]
		}
		text = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(body), "```"))
	}
	if text == "" {
		return nil, errors.New("the answer is empty, not JSON")
	}
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return nil, errors.New("the answer is not valid JSON")
	}
	if err := schema.Validate(v); err != nil {
		return nil, err
	}
	return json.RawMessage(text), nil
}

// Correction is the prompt of the one corrective turn a child gets when
// its final answer does not match the output schema: what is wrong, and
// the answer it must give instead.
func Correction(err error) string {
	return "Your final message does not match the required JSON Schema: " + Cut(err.Error(), 1024) +
		"\n\nReply with the corrected answer: exactly one JSON value valid against the schema you were given, and nothing else (no prose, no code fence)."
}
