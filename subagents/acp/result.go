// This file maps a prompt turn's end onto the seam's Result: stop reasons,
// output, structured answers, and diagnostics safe to show people.

package acpprovider

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/subagents"
)

// maxDiagnostic caps a diagnostic (the seam's bound).
const maxDiagnostic = 4 << 10

// promptResult is the session/prompt response, read leniently: usage is
// not in every version of the schema.
type promptResult struct {
	StopReason acp.StopReason `json:"stopReason"`
	Usage      *acp.Usage     `json:"usage"`
}

// stopOf maps an ACP stop reason; a reason that is not a success carries a
// diagnostic.
func stopOf(r acp.StopReason) (subagents.StopReason, string) {
	switch r {
	case acp.StopReasonEndTurn:
		return subagents.StopCompleted, ""
	case acp.StopReasonCancelled:
		return subagents.StopAborted, ""
	case acp.StopReasonMaxTokens:
		return subagents.StopMaxTokens, ""
	case acp.StopReasonRefusal:
		return subagents.StopRefusal, ""
	case acp.StopReasonMaxTurnRequests:
		return subagents.StopError, "the agent reached its limit of model requests for one task before it finished"
	}
	return subagents.StopError, fmt.Sprintf("the agent ended with an unknown stop reason %q", cut(string(r), 64))
}

func usageOf(u *acp.Usage) llm.Usage {
	if u == nil {
		return llm.Usage{}
	}
	out := llm.Usage{InputTokens: int64(u.InputTokens), OutputTokens: int64(u.OutputTokens), TotalTokens: int64(u.TotalTokens)}
	if u.ThoughtTokens != nil {
		out.ReasoningTokens = int64(*u.ThoughtTokens)
	}
	if u.CachedReadTokens != nil {
		out.CachedInputTokens = int64(*u.CachedReadTokens)
	}
	return out
}

// wireMessage is a peer error's message and, when it has one, the reason
// in its data, scrubbed.
func wireMessage(err error) string {
	var ae *acp.Error
	if !errors.As(err, &ae) {
		return scrub(firstLine(err.Error()))
	}
	msg := ae.Message
	var data map[string]any
	switch d := ae.Data.(type) {
	case json.RawMessage:
		var s string
		if json.Unmarshal(d, &s) == nil && s != "" {
			msg += ": " + s
		} else if json.Unmarshal(d, &data) != nil {
			data = nil
		}
	case map[string]any:
		data = d
	case string:
		if d != "" {
			msg += ": " + d
		}
	}
	if r, ok := data["reason"].(string); ok && r != "" && !strings.Contains(msg, r) {
		msg += ": " + r
	}
	return cut(scrub(firstLine(msg)), 600) + fmt.Sprintf(" (code %d)", ae.Code)
}

// resolveSchema compiles an output schema.
func resolveSchema(raw json.RawMessage) (*jsonschema.Resolved, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	return s.Resolve(nil)
}

// structured reads a final answer as JSON (tolerating a code fence around
// it) and validates it against schema.
func structured(schema *jsonschema.Resolved, answer string) (json.RawMessage, error) {
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

// secretish matches what could be a credential: key=value pairs naming a
// secret, bearer tokens, well-known key prefixes and long key-like runs.
var secretish = regexp.MustCompile(`(?i)((api[_-]?key|access[_-]?key|token|secret|password|passwd|authorization|credentials?)["']?\s*[:=]\s*["']?((bearer|basic)\s+)?[^\s"',]+|(bearer|basic)\s+\S+|\b(sk|pk|rk|ghp|gho|ghs|xox[abp])[-_][A-Za-z0-9_\-]{6,}|[A-Za-z0-9_\-+=]{32,})`)

// scrub removes anything that looks like a secret.
func scrub(s string) string {
	return secretish.ReplaceAllString(strings.TrimSpace(s), "[redacted]")
}

// scrubTail is the last n bytes of a process's output, scrubbed, starting
// on a line when it can.
func scrubTail(s string, n int) string {
	s = strings.TrimRight(s, "\n\r\t ")
	if len(s) > n {
		s = s[len(s)-n:]
		for len(s) > 0 && !utf8.RuneStart(s[0]) {
			s = s[1:]
		}
		if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
			s = s[i+1:]
		}
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = scrub(l)
	}
	return strings.Join(lines, "\n")
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// cut shortens s to at most n bytes at a character boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n - len("…")
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
