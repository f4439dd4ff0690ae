// This file implements what tools reach through the editor: fs/* for file
// reads and writes, terminal/* for commands, and session/request_permission
// for the permission policy.

package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/agent/session"
	"github.com/dshd/dshd/internal/utf8cut"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/permission"
)

// fileSystem picks, per direction, the editor (when it offers the method)
// or the session's local disk.
func (c *Conn) fileSystem(caps acp.ClientCapabilities, id acp.SessionID, local tools.FileSystem) tools.FileSystem {
	if !caps.FS.ReadTextFile && !caps.FS.WriteTextFile {
		return local
	}
	return &editorFS{c: c, session: id, read: caps.FS.ReadTextFile, write: caps.FS.WriteTextFile, local: local}
}

// editorFS reads and writes through the client so the agent sees unsaved
// buffers and the editor tracks its edits.
type editorFS struct {
	c           *Conn
	session     acp.SessionID
	read, write bool
	local       tools.FileSystem
}

func (f *editorFS) ReadTextFile(ctx context.Context, path string, line, limit int) (string, error) {
	if !f.read {
		return f.local.ReadTextFile(ctx, path, line, limit)
	}
	req := &acp.ReadTextFileRequest{SessionID: f.session, Path: path}
	if line > 0 {
		l := uint32(line)
		req.Line = &l
	}
	if limit > 0 {
		l := uint32(limit)
		req.Limit = &l
	}
	resp, err := f.c.peer.ReadTextFile(ctx, req)
	if err != nil {
		if missing(path, err) {
			return "", fmt.Errorf("%s: %w", path, tools.ErrNotExist)
		}
		return "", editorError("reading "+path, err)
	}
	return resp.Content, nil
}

// missing reports whether the editor's failed read of path means the file
// does not exist. Editors say so in different ways: -32002 as ACP asks,
// or -32603 with a reason such as "ENOENT: no such file or directory"
// (the TS SDK's default). A failure without such a reason counts when no
// file is on the disk either, so write_file can still create one; a file
// that is there keeps the editor's error.
func missing(path string, err error) bool {
	if errors.Is(err, acp.ErrResourceNotFound) {
		return true
	}
	var ae *acp.Error
	if !errors.As(err, &ae) || ctxError(err) {
		return false
	}
	// The reason is acp's one rule for a peer's error text.
	for _, s := range []string{ae.Message, ae.Reason()} {
		s = strings.ToLower(s)
		for _, w := range notFoundWords {
			if strings.Contains(s, w) {
				return true
			}
		}
	}
	_, serr := os.Lstat(path)
	return errors.Is(serr, fs.ErrNotExist)
}

// notFoundWords are how error reasons say that a file is missing.
var notFoundWords = []string{"not found", "no such file", "enoent", "does not exist", "doesn't exist", "not exist", "cannot find"}

func ctxError(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

func (f *editorFS) WriteTextFile(ctx context.Context, path, content string) error {
	if !f.write {
		return f.local.WriteTextFile(ctx, path, content)
	}
	_, err := f.c.peer.WriteTextFile(ctx, &acp.WriteTextFileRequest{SessionID: f.session, Path: path, Content: content})
	if err != nil {
		return editorError("writing "+path, err)
	}
	return nil
}

// editorError words a failed client call for the model.
func editorError(what string, err error) error {
	var ae *acp.Error
	if errors.As(err, &ae) {
		return fmt.Errorf("the editor failed %s: %s (code %d)", what, ae.Reason(), ae.Code)
	}
	return fmt.Errorf("the editor failed %s: %w", what, err)
}

// runner runs commands in the editor's terminals when it offers them.
func (c *Conn) runner(caps acp.ClientCapabilities, id acp.SessionID) tools.Runner {
	if !caps.Terminal {
		return c.srv.opts.Runner
	}
	return &terminalRunner{c: c, session: id}
}

// terminalRunner runs a command in an editor terminal: create, stream its
// output while waiting, kill on timeout or cancel, and always release.
// It keeps no more of the output than the command's OutputLimit, the
// outputByteLimit it asks the editor for, whatever the editor sends.
type terminalRunner struct {
	c       *Conn
	session acp.SessionID
	// overLimit is set the first time the editor sent more output than
	// it was asked to keep: logged once a session, not once a poll.
	overLimit atomic.Bool
}

// checkLimit logs, once a session, an answer of n bytes of output over
// the outputByteLimit cmd asked for.
func (r *terminalRunner) checkLimit(tid acp.TerminalID, cmd tools.Command, n int) {
	if cmd.OutputLimit <= 0 || n <= cmd.OutputLimit || r.overLimit.Swap(true) {
		return
	}
	r.c.log.Warn("the editor's terminal sent more output than the outputByteLimit dshd asked for; keeping its last bytes, as the editor should have",
		"session", r.session, "terminal", tid, "bytes", n, "limit", cmd.OutputLimit, "setting", cmp.Or(cmd.OutputLimitSetting, "outputByteLimit"))
}

// tailWithin is the end of out that fits in limit bytes (all of it for
// limit 0), from a character boundary, as ACP asks an editor to cut
// (and as the local runner does), and whether it was cut. The cut
// shares out's memory.
func tailWithin(out string, limit int) (string, bool) {
	if limit <= 0 || len(out) <= limit {
		return out, false
	}
	return utf8cut.TrimPartial(out[len(out)-limit:]), true
}

// fresh is what cur, a terminal's output now, holds that prev, its
// output at the last poll, did not. An editor keeps the last
// outputByteLimit bytes, so once the output filled the limit it stops
// growing and its start moves: the new output is then what follows the
// longest end of prev that cur begins with. Output that repeats itself
// can make that overlap look longer than it is, and the new output
// shorter; nothing tells the two apart, and the final answer, which the
// result holds, is whole.
func fresh(prev, cur string) string {
	if strings.HasPrefix(cur, prev) {
		return cur[len(prev):]
	}
	return cur[overlap(prev, cur):]
}

// overlap is the length of the longest end of a that b begins with
// (Knuth–Morris–Pratt: b's failure function, then a scanned through it).
func overlap(a, b string) int {
	if b == "" {
		return 0
	}
	fail := make([]int32, len(b))
	for i, k := 1, int32(0); i < len(b); i++ {
		for k > 0 && b[i] != b[k] {
			k = fail[k-1]
		}
		if b[i] == b[k] {
			k++
		}
		fail[i] = k
	}
	k := int32(0)
	for i := 0; i < len(a); i++ {
		for k > 0 && (int(k) == len(b) || a[i] != b[k]) {
			k = fail[k-1]
		}
		if a[i] == b[k] {
			k++
		}
	}
	return int(k)
}

// DescribeSandbox words where the command runs for its permission
// question: the client's terminal, confined (or not) as the client says.
func (r *terminalRunner) DescribeSandbox(tools.Command) (string, error) {
	return "runs in the client's terminal: the client decides how it is confined (a parent dshd runs it in its own sandbox)", nil
}

// terminalPoll is how often a running terminal's output is fetched.
const terminalPoll = 300 * time.Millisecond

func (r *terminalRunner) Run(ctx context.Context, cmd tools.Command, started func(string), output func(string)) (tools.CommandResult, error) {
	var res tools.CommandResult
	req := &acp.CreateTerminalRequest{SessionID: r.session, Command: cmd.Command, Args: cmd.Args, Cwd: cmd.Dir}
	if len(cmd.Args) == 0 {
		req.Command, req.Args = "sh", []string{"-c", cmd.Command}
	}
	for _, kv := range cmd.Env {
		name, value, _ := strings.Cut(kv, "=")
		req.Env = append(req.Env, acp.EnvVariable{Name: name, Value: value})
	}
	if cmd.OutputLimit > 0 {
		n := uint64(cmd.OutputLimit)
		req.OutputByteLimit = &n
	}
	created, err := r.c.peer.CreateTerminal(ctx, req)
	if err != nil {
		return res, editorError("creating a terminal", err)
	}
	tid := created.TerminalID
	treq := &acp.TerminalRequest{SessionID: r.session, TerminalID: tid}
	// Release always, even when the turn was cancelled: the terminal would
	// otherwise live on in the editor.
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if _, err := r.c.peer.ReleaseTerminal(rctx, treq); err != nil {
			r.c.log.Debug("terminal/release failed", "terminal", tid, "err", err)
		}
	}()
	if started != nil {
		started(string(tid))
	}

	waitCtx, stopWait := context.WithCancel(ctx)
	defer stopWait()
	if cmd.Timeout > 0 {
		var cancel context.CancelFunc
		waitCtx, cancel = context.WithTimeout(waitCtx, cmd.Timeout)
		defer cancel()
	}
	exited := make(chan *acp.TerminalExitStatus, 1)
	waitErr := make(chan error, 1)
	go func() {
		st, err := r.c.peer.WaitForTerminalExit(waitCtx, treq)
		if err != nil {
			waitErr <- err
			return
		}
		exited <- st
	}()

	ticker := time.NewTicker(terminalPoll)
	defer ticker.Stop()
	// seen is the output at the last poll, within the limit: what is new
	// in the next is told from it.
	seen := ""
	tell := func(out string) {
		kept, _ := tailWithin(out, cmd.OutputLimit)
		if chunk := fresh(seen, kept); chunk != "" && output != nil {
			output(chunk)
		}
		seen = strings.Clone(kept)
	}
	poll := func() {
		out, err := r.c.peer.TerminalOutput(context.WithoutCancel(ctx), treq)
		if err != nil {
			return
		}
		r.checkLimit(tid, cmd, len(out.Output))
		tell(out.Output)
	}
	var status *acp.TerminalExitStatus
loop:
	for {
		select {
		case status = <-exited:
			break loop
		case err := <-waitErr:
			if ctx.Err() == nil && waitCtx.Err() == nil {
				return res, editorError("waiting for the command", err)
			}
			res.TimedOut = ctx.Err() == nil
			kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			if _, err := r.c.peer.KillTerminal(kctx, treq); err != nil {
				r.c.log.Debug("terminal/kill failed", "terminal", tid, "err", err)
			}
			cancel()
			break loop
		case <-ticker.C:
			poll()
		}
	}
	final, err := r.c.peer.TerminalOutput(context.WithoutCancel(ctx), treq)
	if err == nil {
		r.checkLimit(tid, cmd, len(final.Output))
		kept, cut := tailWithin(final.Output, cmd.OutputLimit)
		if cut {
			// A copy: the tail would keep the editor's whole answer alive
			// in the result, the model's history and the journal's queue.
			kept = strings.Clone(kept)
		}
		res.Output, res.Truncated = kept, final.Truncated || cut
		if status == nil {
			status = final.ExitStatus
		}
		// What the command printed since the last poll (all of it, for a
		// command that ended before the first): output sees everything
		// the limit keeps.
		tell(final.Output)
	}
	if status != nil {
		if status.ExitCode != nil {
			code := int(*status.ExitCode)
			res.ExitCode = &code
		}
		if status.Signal != nil {
			res.Signal = *status.Signal
		}
	}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	return res, nil
}

// asker puts permission questions to the editor and translates its
// answers; tools/permission decides what they mean. Requests from a
// subagent child are routed to the child's session when the editor sees
// children, or mirrored as a parent tool call otherwise.
type asker struct {
	c *Conn
	s *session.Session // set once the session is built, before any turn
}

var permissionOptions = []acp.PermissionOption{
	{OptionID: "allow_once", Name: "Allow", Kind: acp.PermissionAllowOnce},
	{OptionID: "allow_always", Name: "Always allow", Kind: acp.PermissionAllowAlways},
	{OptionID: "reject_once", Name: "Reject", Kind: acp.PermissionRejectOnce},
	{OptionID: "reject_always", Name: "Always reject", Kind: acp.PermissionRejectAlways},
}

func (a *asker) Ask(ctx context.Context, req tools.PermissionRequest) (permission.Answer, error) {
	c := a.c
	sessionID := acp.SessionID(a.s.ID())
	toolCallID := req.ToolCallID
	title := req.Title
	var onDone func(permission.Answer)
	// A client answers "cancelled" only when it cancelled the work the
	// question belongs to. Its session/cancel may still be queued behind
	// this answer (answers are matched on the read loop), so the answer
	// itself cancels that work: the root turn, or the exposed child.
	cancelWork := func() { a.s.Cancel() }

	if req.Requester != "" {
		if ch := c.child(acp.SessionID(req.Requester)); ch != nil {
			cancelWork = func() {
				if ch.cancel != nil {
					ch.cancel()
				}
			}
			// The editor sees the child: ask on its own session, where the
			// tool call was announced, and show it blocked meanwhile.
			sessionID = ch.id
			c.childState(ch, stateRequiresAction())
			onDone = func(permission.Answer) { c.childState(ch, stateRunning()) }
		} else {
			// Mirror the child's call on the parent first (the editor has
			// never seen the child's ids), then ask with the mirror's id.
			toolCallID = fmt.Sprintf("%s/%s%d", req.Requester, c.idBase, c.mintID())
			if !strings.HasPrefix(title, "Subagent: ") {
				title = "Subagent: " + title
			}
			tr := &translator{c: c, journal: a.s, session: sessionID}
			c.send(a.s, sessionID, &acp.ToolCall{
				ToolCallID: acp.ToolCallID(toolCallID),
				Title:      title,
				Name:       req.ToolName,
				Kind:       acp.ToolKind(req.Kind),
				Status:     acp.ToolCallStatusPending,
				Content:    tr.content(req.Content),
				Locations:  locations(req.Locations),
			})
			onDone = func(ans permission.Answer) {
				st := acp.ToolCallStatusCompleted
				if ans != permission.AllowOnce && ans != permission.AllowAlways {
					st = acp.ToolCallStatusFailed
				}
				c.send(a.s, sessionID, &acp.ToolCallUpdate{ToolCallID: acp.ToolCallID(toolCallID), Name: req.ToolName, Status: st})
			}
		}
	}
	tr := &translator{c: c, session: sessionID, optedIn: c.optedIn()}
	preq := &acp.RequestPermissionRequest{
		SessionID: sessionID,
		ToolCall: acp.ToolCallUpdate{
			ToolCallID: acp.ToolCallID(toolCallID),
			Title:      title,
			Name:       req.ToolName,
			Kind:       acp.ToolKind(req.Kind),
			Content:    tr.content(req.Content),
			Locations:  locations(req.Locations),
		},
		Options: permissionOptions,
	}
	resp, err := c.peer.RequestPermission(ctx, preq)
	ans := permission.AnswerCancelled
	if err == nil {
		ans = answerOf(resp)
		if ans == permission.AnswerCancelled {
			cancelWork()
		}
	}
	if onDone != nil {
		onDone(ans)
	}
	switch {
	case errors.Is(err, acp.ErrRequestCancelled):
		// The client cancelled the request itself: its answer is
		// "cancelled".
		return permission.AnswerCancelled, nil
	case err != nil:
		// Whether a failure while the turn was being cancelled counts as
		// cancelled is the policy's rule, not the asker's.
		return "", editorError("asking permission", err)
	}
	return ans, nil
}

// metaRefused, true on a rejection, says no person gave it (a parent
// dshd whose binding refuses every request of this agent).
const metaRefused = "dshd.dev/refused"

// answerOf maps the client's choice; an unknown option counts as a
// rejection (dshd policy).
func answerOf(resp *acp.RequestPermissionResponse) permission.Answer {
	if refused, _ := resp.Meta[metaRefused].(bool); refused {
		if _, selected := resp.Outcome.(*acp.SelectedPermissionOutcome); selected {
			return permission.AnswerRefused
		}
	}
	switch o := resp.Outcome.(type) {
	case *acp.CancelledPermissionOutcome:
		return permission.AnswerCancelled
	case *acp.SelectedPermissionOutcome:
		for _, opt := range permissionOptions {
			if opt.OptionID == o.OptionID {
				switch opt.Kind {
				case acp.PermissionAllowOnce:
					return permission.AllowOnce
				case acp.PermissionAllowAlways:
					return permission.AllowAlways
				case acp.PermissionRejectAlways:
					return permission.RejectAlways
				}
			}
		}
	}
	return permission.RejectOnce
}
