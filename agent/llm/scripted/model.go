// The model: matching a request to a rule and streaming the reply.

package scripted

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dshd/dshd/agent/llm"
)

// DefaultContextWindow is the context window Models reports by default.
const DefaultContextWindow = 128000

// ErrNoRule is returned (wrapped, naming the last user text) when no rule
// matches a call.
var ErrNoRule = errors.New("scripted: no rule matches")

// Options tune a [Model].
type Options struct {
	// Instant ignores every delay and streams text and reasoning in one
	// chunk each (benchmarks).
	Instant bool
}

// Model is a deterministic [llm.Model] and [llm.Lister]. It keeps no state
// between calls: each reply is chosen by matching the request, so a parent
// and its parallel subagent children can share one instance and still get
// the same answers whatever the interleaving.
type Model struct {
	script  Script
	rules   []compiled
	instant bool
}

var (
	_ llm.Model          = (*Model)(nil)
	_ llm.Lister         = (*Model)(nil)
	_ llm.ThinkingSwitch = (*Model)(nil)
)

// New compiles s. opts may be nil.
func New(s Script, opts *Options) (*Model, error) {
	rules, err := compile(&s)
	if err != nil {
		return nil, err
	}
	m := &Model{script: s, rules: rules}
	if opts != nil {
		m.instant = opts.Instant
	}
	return m, nil
}

// Instant returns a copy of m in instant mode (see [Options.Instant]).
func (m *Model) Instant() *Model {
	c := *m
	c.instant = true
	return &c
}

// ThinkingSwitch implements llm.ThinkingSwitch: thinking is on unless a
// request turns it off, which drops the rules' reasoning.
func (m *Model) ThinkingSwitch() (on, ok bool) { return true, true }

// Script returns the script m runs.
func (m *Model) Script() Script { return m.script }

// Models lists the one model the script answers as.
func (m *Model) Models(context.Context) ([]llm.Info, error) {
	id := m.script.Model
	if id == "" {
		id = "scripted"
	}
	cw := m.script.ContextWindow
	if cw == 0 {
		cw = DefaultContextWindow
	}
	return []llm.Info{{ID: id, Name: "Scripted model (offline)", ContextWindow: cw, Images: true}}, nil
}

// view is what the rules look at in a request.
type view struct {
	user, tool, system string
	step, turn         int
}

func viewOf(req *llm.Request) view {
	var v view
	last := -1
	var sys []string
	if req.System != "" {
		sys = append(sys, req.System)
	}
	for i, msg := range req.Messages {
		switch msg.Role {
		case llm.RoleUser:
			last = i
			v.turn++
		case llm.RoleSystem:
			sys = append(sys, msg.Content)
		}
	}
	v.system = strings.Join(sys, "\n")
	if last >= 0 {
		v.user = req.Messages[last].Content
	}
	for _, msg := range req.Messages[last+1:] {
		switch msg.Role {
		case llm.RoleAssistant:
			v.step++
		case llm.RoleTool:
			v.tool = msg.Content
		}
	}
	return v
}

func (c *compiled) matches(v *view) bool {
	return (c.user == nil || c.user.MatchString(v.user)) &&
		(c.Step == nil || *c.Step == v.step) &&
		(c.tool == nil || c.tool.MatchString(v.tool)) &&
		(c.system == nil || c.system.MatchString(v.system))
}

// Stream answers req with the first matching rule.
func (m *Model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		if err := m.stream(ctx, req, yield); err != nil && !errors.Is(err, errStopped) {
			yield(llm.Event{}, err)
		}
	}
}

var errStopped = errors.New("scripted: consumer stopped")

func (m *Model) stream(ctx context.Context, req *llm.Request, yield func(llm.Event, error) bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if req == nil {
		return errors.New("scripted: nil request")
	}
	v := viewOf(req)
	var rule *compiled
	for i := range m.rules {
		if m.rules[i].matches(&v) {
			rule = &m.rules[i]
			break
		}
	}
	if rule == nil {
		return fmt.Errorf("%w the last user text %q (step %d)", ErrNoRule, v.user, v.step)
	}
	sub := strings.NewReplacer("{{user}}", v.user, "{{tool}}", v.tool, "{{step}}", strconv.Itoa(v.step))
	emit := func(ev llm.Event) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !yield(ev, nil) {
			return errStopped
		}
		return nil
	}
	if err := m.wait(ctx, rule.DelayMs); err != nil {
		return err
	}

	var outRunes int
	first := true
	chunks := func(kind llm.EventKind, text string) error {
		outRunes += utf8.RuneCountInString(text)
		for _, piece := range m.split(text, rule.Chunk) {
			if !first {
				if err := m.wait(ctx, rule.ChunkDelayMs); err != nil {
					return err
				}
			}
			first = false
			if err := emit(llm.Event{Kind: kind, Text: piece}); err != nil {
				return err
			}
		}
		return nil
	}
	// A request that turns thinking off gets no reasoning, as a thinking
	// model answers then.
	if rule.Reasoning != nil && (req.Thinking == nil || *req.Thinking) {
		if err := chunks(llm.EventReasoning, sub.Replace(*rule.Reasoning)); err != nil {
			return err
		}
	}
	if rule.Text != "" {
		if err := chunks(llm.EventText, sub.Replace(rule.Text)); err != nil {
			return err
		}
	}
	if rule.Error != "" {
		return llm.NewAPIError(rule.ErrorStatus, "scripted", sub.Replace(rule.Error), "", rule.Retryable, nil)
	}
	if rule.Hang {
		<-ctx.Done()
		return ctx.Err()
	}
	for i, tc := range rule.ToolCalls {
		args := substituteJSON(rule.args[i], sub)
		if rule.argIsString[i] {
			var s string
			_ = json.Unmarshal([]byte(args), &s)
			args = s
		}
		outRunes += utf8.RuneCountInString(args)
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("call_%d_%d_%d", v.turn, v.step, i)
		}
		if err := emit(llm.Event{Kind: llm.EventToolCall, ToolCall: &llm.ToolCall{
			ID: id, Name: tc.Name, Arguments: args,
		}}); err != nil {
			return err
		}
	}
	u := llm.Usage{}
	if rule.Usage != nil {
		u.InputTokens, u.OutputTokens = rule.Usage.Input, rule.Usage.Output
	} else {
		u.InputTokens = int64(inputRunes(req)+3) / 4
		u.OutputTokens = int64(outRunes+3) / 4
	}
	u.TotalTokens = u.InputTokens + u.OutputTokens
	if err := emit(llm.Event{Kind: llm.EventUsage, Usage: &u}); err != nil {
		return err
	}
	return emit(llm.Event{Kind: llm.EventFinish, Finish: rule.finish})
}

func inputRunes(req *llm.Request) int {
	n := utf8.RuneCountInString(req.System)
	for _, msg := range req.Messages {
		n += utf8.RuneCountInString(msg.Content)
		if msg.Reasoning != nil {
			n += utf8.RuneCountInString(*msg.Reasoning)
		}
		for _, tc := range msg.ToolCalls {
			n += utf8.RuneCountInString(tc.Name) + utf8.RuneCountInString(tc.Arguments)
		}
	}
	for _, t := range req.Tools {
		n += utf8.RuneCountInString(t.Name) + utf8.RuneCountInString(t.Description) + len(t.Parameters)
	}
	return n
}

// wait sleeps ms milliseconds unless instant, returning early with ctx's
// error when it is cancelled.
func (m *Model) wait(ctx context.Context, ms int) error {
	if m.instant {
		return ctx.Err()
	}
	return llm.Sleep(ctx, time.Duration(ms)*time.Millisecond)
}

// split cuts text into pieces of n runes (16 when n is 0); instant mode and
// an empty text give one piece, so "" still yields one (empty) event.
func (m *Model) split(text string, n int) []string {
	if n <= 0 {
		n = 16
	}
	if m.instant || text == "" {
		return []string{text}
	}
	var out []string
	for len(text) > 0 {
		i, count := 0, 0
		for i < len(text) && count < n {
			_, size := utf8.DecodeRuneInString(text[i:])
			i += size
			count++
		}
		out = append(out, text[:i])
		text = text[i:]
	}
	return out
}

// substituteJSON expands the substitutions inside every string literal of
// a JSON text, keeping its key order, and compacts it.
func substituteJSON(raw string, sub *strings.Replacer) string {
	if !strings.Contains(raw, "{{") {
		return raw
	}
	var out bytes.Buffer
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '"' {
			out.WriteByte(c)
			i++
			continue
		}
		j := i + 1
		for j < len(raw) && raw[j] != '"' {
			if raw[j] == '\\' {
				j++
			}
			j++
		}
		lit := raw[i:min(j+1, len(raw))]
		var s string
		if json.Unmarshal([]byte(lit), &s) != nil {
			out.WriteString(lit)
		} else {
			enc := json.NewEncoder(&out)
			enc.SetEscapeHTML(false)
			_ = enc.Encode(sub.Replace(s))
			out.Truncate(out.Len() - 1) // Encode's newline
		}
		i = j + 1
	}
	var compact bytes.Buffer
	if json.Compact(&compact, out.Bytes()) != nil {
		return out.String()
	}
	return compact.String()
}
