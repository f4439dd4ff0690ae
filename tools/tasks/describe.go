// This file words a session's tasks for people and the model: the list
// /tasks and task_list show, and one task in full.

package tasks

import (
	"fmt"
	"strings"
	"time"

	"github.com/dshd/dshd/internal/utf8cut"
)

// Describe lists tasks, one line each: id, kind, state, how long it ran,
// title, and the tokens a subagent used.
func Describe(list []Info, now time.Time) string {
	if len(list) == 0 {
		return "No background tasks in this session."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Background tasks (%d):\n", len(list))
	for _, in := range list {
		end := in.Ended
		if in.State == StateRunning || end.IsZero() {
			end = now
		}
		fmt.Fprintf(&b, "- %s %s, %s for %s: %s", in.ID, in.Kind, in.State, round(end.Sub(in.Started)), utf8cut.Line(in.Title, 100))
		if u := in.Usage; u.InputTokens+u.OutputTokens > 0 {
			fmt.Fprintf(&b, " (%d tokens in, %d out)", u.InputTokens, u.OutputTokens)
		}
		if in.Runs > 1 {
			fmt.Fprintf(&b, " [%d runs]", in.Runs)
		}
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n")
}

// Describe lists the set's tasks (see the function Describe).
func (s *Set) Describe() string { return Describe(s.List(), s.o.Now()) }

// round shortens a duration for display.
func round(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// header is the first lines of a task's full view: what it is and where
// it is.
func header(in Info, now time.Time) string {
	line := Describe([]Info{in}, now)
	_, line, _ = strings.Cut(line, "\n- ")
	if in.Dropped > 0 {
		line += fmt.Sprintf("\n(only the last %d bytes of its output are kept; %d earlier bytes are gone)", len(in.Output), in.Dropped)
	}
	return line
}
