// This file implements the session's permission policy: the modes, the
// questions put to the user through an Asker, and the remembered "always"
// answers.

package permission

import (
	"context"
	"fmt"
	"sync"

	"github.com/dshd/dshd/tools"
)

// Mode is a session's permission mode.
type Mode string

// Permission modes.
const (
	// ModeAsk asks before every edit and every command.
	ModeAsk Mode = "ask"
	// ModeAcceptEdits edits files without asking and asks before commands.
	ModeAcceptEdits Mode = "accept-edits"
	// ModeYolo never asks.
	ModeYolo Mode = "yolo"
)

// ModeInfo describes a mode for the editor's mode picker.
type ModeInfo struct {
	ID          Mode
	Name        string
	Description string
}

// Modes returns every mode, in the order an editor should list them.
func Modes() []ModeInfo {
	return []ModeInfo{
		{ModeAsk, "Ask", "Ask before editing files or running commands"},
		{ModeAcceptEdits, "Accept edits", "Edit files without asking; ask before running commands"},
		{ModeYolo, "Yolo", "Edit files and run commands without asking"},
	}
}

// ParseMode returns the mode named s, or an error naming s.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes() {
		if string(m.ID) == s {
			return m.ID, nil
		}
	}
	return "", fmt.Errorf("permission: unknown permission mode %q", s)
}

// Answer is the user's answer to a permission question.
type Answer string

// Answers, named after ACP's PermissionOptionKind, plus the cancelled
// outcome.
const (
	AllowOnce    Answer = "allow_once"
	AllowAlways  Answer = "allow_always"
	RejectOnce   Answer = "reject_once"
	RejectAlways Answer = "reject_always"
	// AnswerCancelled is the answer to a question asked during a turn that
	// was then cancelled.
	AnswerCancelled Answer = "cancelled"
	// AnswerRefused is a rejection no person gave: whoever the question
	// went to refused it by a rule (a parent dshd whose subagent binding
	// denies every request). It decides [tools.Refused] and is never
	// remembered.
	AnswerRefused Answer = "refused"
)

// Asker puts a permission question to the user; acp/server implements it
// with session/request_permission. Ask should return when ctx is done (the
// policy stops waiting then anyway). An error means the question could not
// be asked (the connection is gone) and ends the turn; an answer the Asker
// cannot map is best reported as RejectOnce.
type Asker interface {
	Ask(ctx context.Context, req tools.PermissionRequest) (Answer, error)
}

// AskerFunc adapts a function to [Asker].
type AskerFunc func(ctx context.Context, req tools.PermissionRequest) (Answer, error)

// Ask calls f(ctx, req).
func (f AskerFunc) Ask(ctx context.Context, req tools.PermissionRequest) (Answer, error) {
	return f(ctx, req)
}

// Policy is a session's [tools.Permission]: it applies the mode and
// remembers the "always" answers, per tool name, for the life of the
// session. Reads never ask. A remembered rejection holds in every mode,
// even yolo: the user said never. Policy is safe for concurrent use.
type Policy struct {
	asker Asker

	mu     sync.Mutex
	mode   Mode              // guarded by mu
	always map[string]Answer // tool name → AllowAlways or RejectAlways; guarded by mu
}

var _ tools.Permission = (*Policy)(nil)

// NewPolicy returns a policy in mode that asks through asker. An unknown
// mode is treated as ModeAsk. asker may be nil only if nothing will be
// asked (yolo); a question without an asker is rejected.
func NewPolicy(mode Mode, asker Asker) *Policy {
	p := &Policy{asker: asker, always: make(map[string]Answer)}
	p.mode = validMode(mode)
	return p
}

func validMode(m Mode) Mode {
	if _, err := ParseMode(string(m)); err != nil {
		return ModeAsk
	}
	return m
}

// Mode returns the current mode.
func (p *Policy) Mode() Mode {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mode
}

// SetMode changes the mode; it applies to the next Check. An unknown mode
// is an error and leaves the mode unchanged.
func (p *Policy) SetMode(m Mode) error {
	if _, err := ParseMode(string(m)); err != nil {
		return err
	}
	p.mu.Lock()
	p.mode = m
	p.mu.Unlock()
	return nil
}

// Check decides req. A question that is pending when ctx is done, or that
// the user answers "cancelled", is Cancelled (see [Decide] for the rule);
// an answer that arrives after that is ignored (nor remembered).
func (p *Policy) Check(ctx context.Context, req tools.PermissionRequest) (tools.Decision, error) {
	if req.Effect == tools.EffectRead {
		return tools.Allowed, nil
	}
	p.mu.Lock()
	mode := p.mode
	remembered := p.always[req.RememberKey()]
	p.mu.Unlock()
	switch {
	case remembered == RejectAlways:
		return tools.Rejected, nil
	case remembered == AllowAlways:
		return tools.Allowed, nil
	case mode == ModeYolo:
		return tools.Allowed, nil
	case mode == ModeAcceptEdits && req.Effect == tools.EffectEdit:
		return tools.Allowed, nil
	}
	if ctx.Err() != nil {
		return tools.Cancelled, nil
	}
	if p.asker == nil {
		return tools.Refused, nil
	}
	answer, err := ask(ctx, p.asker, req)
	if cancelled(ctx, answer, err) {
		return tools.Cancelled, nil
	}
	if err != nil {
		return 0, err
	}
	switch answer {
	case AllowAlways, RejectAlways:
		p.mu.Lock()
		p.always[req.RememberKey()] = answer
		p.mu.Unlock()
	}
	switch answer {
	case AllowOnce, AllowAlways:
		return tools.Allowed, nil
	case AnswerRefused:
		return tools.Refused, nil
	}
	return tools.Rejected, nil
}

// ask runs one question, returning as soon as ctx is done even if the
// Asker does not. The Asker's goroutine then finishes on its own (Ask must
// honour ctx) and its answer is dropped.
func ask(ctx context.Context, a Asker, req tools.PermissionRequest) (Answer, error) {
	type reply struct {
		answer Answer
		err    error
	}
	ch := make(chan reply, 1)
	go func() {
		answer, err := a.Ask(ctx, req)
		ch <- reply{answer, err}
	}()
	select {
	case r := <-ch:
		return r.answer, r.err
	case <-ctx.Done():
		return AnswerCancelled, nil
	}
}

// DenyAll is a Permission that rejects every call that would have to ask,
// at once, without asking: a subagent binding pinned to deny. Reads are
// still allowed.
var DenyAll tools.Permission = denyAll{}

type denyAll struct{}

func (denyAll) Check(_ context.Context, req tools.PermissionRequest) (tools.Decision, error) {
	if req.Effect == tools.EffectRead {
		return tools.Allowed, nil
	}
	return tools.Refused, nil
}
