// This file collects what a run reports once instead of in every case:
// findings in the agent's session setup results (initialize, session/new,
// session/load, session/resume), which every case would otherwise repeat,
// and advice-level findings (keys only the draft schema defines). It also
// renders the exchange a failure or a finding is about.

package conformance

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// setupMethods are the requests whose results every case sees again.
var setupMethods = []string{"initialize", "session/new", "session/load", "session/resume"}

// finding is one distinct violation and the cases it was seen in.
type finding struct {
	v     Violation
	cases []string
}

// findings is the run-wide set of distinct findings; add is safe for
// concurrent cases.
type findings struct {
	mu    sync.Mutex
	byKey map[string]*finding
	order []string
}

func (f *findings) add(v Violation, caseID string) {
	key := v.Item + "\x00" + v.method + "\x00" + v.Text
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.byKey == nil {
		f.byKey = map[string]*finding{}
	}
	fd, ok := f.byKey[key]
	if !ok {
		fd = &finding{v: v}
		f.byKey[key] = fd
		f.order = append(f.order, key)
	}
	if !slices.Contains(fd.cases, caseID) {
		fd.cases = append(fd.cases, caseID)
	}
}

// results returns, per checklist item in checklist order, one failing
// Result for its findings that break a rule ("findings/ITEM") and one
// advice Result for the rest ("findings/ITEM/advice").
func (f *findings) results() []Result {
	f.mu.Lock()
	defer f.mu.Unlock()
	type group struct {
		item   string
		advice bool
	}
	byGroup := map[group][]*finding{}
	for _, k := range f.order {
		fd := f.byKey[k]
		g := group{fd.v.Item, fd.v.Advice}
		byGroup[g] = append(byGroup[g], fd)
	}
	var out []Result
	for _, it := range Checklist() {
		for _, advice := range []bool{false, true} {
			fds := byGroup[group{it.ID, advice}]
			if len(fds) == 0 {
				continue
			}
			r := Result{ID: "findings/" + it.ID, Name: "reported once: " + it.Title + " (in the session setup results every case repeats, or a draft feature)", Items: []string{it.ID}, Status: Fail}
			level := "finding"
			if advice {
				r.ID += "/advice"
				r.Status = Advice
				level = "advice"
			}
			var b strings.Builder
			for i, fd := range fds {
				if i > 0 {
					b.WriteByte('\n')
				}
				slices.Sort(fd.cases)
				fmt.Fprintf(&b, "%s: %s\n  seen in %d case(s): %s\n%s", level, fd.v.Text, len(fd.cases), clip(strings.Join(fd.cases, ", "), 300), strings.TrimRight(fd.v.exchange, "\n"))
			}
			r.Detail = b.String()
			out = append(out, r)
		}
	}
	return out
}

// annotate records, on a violation, the method of the line that broke the
// rule (for a response: the request's) and that line with the request it
// answers, for the failure details.
func annotate(v *Violation, lines []*Line, process int) {
	if v.Seq < 0 || v.Seq >= len(lines) {
		return
	}
	l := lines[v.Seq]
	v.process = process
	v.method = l.ReplyTo
	if l.Msg != nil && l.Msg.Method != "" {
		v.method = l.Msg.Method
	}
	var b strings.Builder
	if req := requestOf(lines, l); req != nil {
		fmt.Fprintf(&b, "    %s\n", req)
	}
	fmt.Fprintf(&b, "    %s   (agent process %d, line %d)\n", l, process, l.Seq)
	v.exchange = b.String()
}

// requestOf finds the client's request a response line answers.
func requestOf(lines []*Line, resp *Line) *Line {
	if resp.Dir != FromAgent || resp.Msg == nil || !resp.Msg.IsResponse() {
		return nil
	}
	key := resp.Msg.IDKey()
	for i := resp.Seq - 1; i >= 0; i-- {
		if l := lines[i]; l.Dir == ToAgent && l.Msg != nil && l.Msg.IsRequest() && l.Msg.IDKey() == key {
			return l
		}
	}
	return nil
}

// isSetup reports whether v is about the result of a session setup
// request.
func (v *Violation) isSetup() bool { return slices.Contains(setupMethods, v.method) }

// excerpt renders the lines of one process a reader needs to see: all of
// them when there are few, else the lines before each point of interest
// (where a failure was recorded, a line that broke a rule) and the last
// lines, with the gaps marked.
func excerpt(lines []*Line, points []int) string {
	const before, tail, all = 10, 12, 30
	keep := make([]bool, len(lines))
	if len(lines) <= all {
		for i := range keep {
			keep[i] = true
		}
	}
	for _, p := range points {
		for i := max(0, p-before); i <= p && i < len(lines); i++ {
			keep[i] = true
		}
	}
	for i := max(0, len(lines)-tail); i < len(lines); i++ {
		keep[i] = true
	}
	var b strings.Builder
	skipped := 0
	for i, l := range lines {
		if !keep[i] {
			skipped++
			continue
		}
		if skipped > 0 {
			fmt.Fprintf(&b, "    … %d line(s)\n", skipped)
			skipped = 0
		}
		b.WriteString("    ")
		b.WriteString(l.String())
		b.WriteByte('\n')
	}
	return b.String()
}
