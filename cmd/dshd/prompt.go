// This file implements `dshd prompt "TEXT"`: one headless turn for scripts
// and CI. The daemon runs in-process behind a pipe and this command is its
// ACP client: the answer goes to stdout, tool activity to stderr. It could
// drive a session directly, but speaking ACP is what makes --json print
// the very session/update stream an editor gets (the same translation,
// title and usage updates and permission questions), for microseconds of
// pipe; the session is built the one way, by the server (session.New).

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/agent/session"
	"github.com/dshd/dshd/cmd/dshd/internal/config"
	"github.com/dshd/dshd/cmd/dshd/internal/daemon"
	"github.com/dshd/dshd/internal/noeditor"

	"github.com/dshd/dshd/acp/rpc"
)

// Exit codes of `dshd prompt`.
const (
	exitOK        = 0
	exitFailed    = 1
	exitInterrupt = 130
)

// promptOpts are the command's own flags.
type promptOpts struct {
	json, allow bool
	cwd         string
	resume      string // a session id, "" for a new session
	continueCwd bool   // continue the latest session of cwd
	addDirs     []string
	mcpConfig   string
	// servers are the MCP servers --mcp-config names.
	servers []acp.McpServer
}

func newPromptCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	var po promptOpts
	cmd := &cobra.Command{
		Use:   `prompt "TEXT"`,
		Short: "Run one prompt turn headlessly: the answer on stdout, tool activity on stderr",
		Long: `Run one prompt turn and exit: 0 on end_turn, 1 on an error or another stop
reason, 130 when interrupted (Ctrl-C cancels the turn cleanly). With --json,
stdout is a JSONL stream of events: each session/update, then {"stopReason":…,
"usage":…, "children":[…]} (the turn's tokens with every subagent's, and each
subagent's share) or {"error":…, "code":…}. "-" as TEXT reads the prompt from stdin.

The run ends by printing the session it used on stderr; --resume ID or
--continue (the latest session of the working directory) runs the turn in
that session instead of a new one. A run whose first turn failed before the
agent did anything keeps no session.

Nobody is there to answer permission questions: they are rejected, unless
--yes allows each one. --mode accept-edits lets edits through without a
question (commands are still asked, so rejected without --yes); --mode yolo
asks nothing. On a terminal, the last line of stderr says what the run is
waiting for.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := config.Load(cmd.Flags(), os.LookupEnv)
			if err != nil {
				return err
			}
			if po.resume != "" && po.continueCwd {
				return &usageError{"prompt: --resume and --continue both name a session; give one"}
			}
			live := newLiveLine(stderr)
			log, err := newLogger(live, st.LogLevel, st.LogFormat)
			if err != nil {
				return err
			}
			// The failures the prompt prints itself would be logged too.
			log = slog.New(quietReported{log.Handler()})
			warnUnknownEnv(st, log)
			text := args[0]
			if text == "-" {
				b, err := io.ReadAll(stdin)
				if err != nil {
					return err
				}
				text = string(b)
			}
			if strings.TrimSpace(text) == "" {
				// "$PROMPT" with PROMPT unset, or an empty stdin: a turn of
				// nothing would still cost a model call.
				return &usageError{"prompt: the prompt is empty (give TEXT, or - to read it from stdin)"}
			}
			cwdGiven := po.cwd != ""
			if po.cwd, err = promptDir("--cwd", po.cwd); err != nil {
				return err
			}
			for i, dir := range po.addDirs {
				if po.addDirs[i], err = promptDir("--add-dir", dir); err != nil {
					return err
				}
			}
			if po.mcpConfig != "" {
				if po.servers, err = readMCPConfig(po.mcpConfig); err != nil {
					return err
				}
			}
			d, err := daemon.New(st, log, os.LookupEnv)
			if err != nil {
				return err
			}
			defer d.Close()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			h := &headless{
				out: stdout, live: live, json: po.json, allow: po.allow,
				model: d.ModelID, timeout: st.ModelTimeout,
			}
			h.r = renderer{out: live.before(stdout), tools: live}
			run := &promptRun{d: d, h: h, opts: po, cwdGiven: cwdGiven, text: text}
			if cmd.Flags().Changed("mode") {
				run.mode = st.Mode // the command line's, for a resumed session too
			}
			code := run.run(ctx)
			if code != exitOK {
				return &exitError{code: code}
			}
			return nil
		},
	}
	config.AddFlags(cmd.Flags(), config.Prompt)
	cmd.Flags().BoolVar(&po.json, "json", false, "write a JSONL stream of events to stdout")
	cmd.Flags().BoolVar(&po.allow, "yes", false, "allow every permission request (default: reject them; --mode accept-edits or yolo asks fewer)")
	cmd.Flags().StringVar(&po.cwd, "cwd", "", "the session's working directory (default: the current directory; with --resume, the session's)")
	cmd.Flags().StringVar(&po.resume, "resume", "", "run the turn in the stored session `ID` (dshd sessions list shows them)")
	cmd.Flags().BoolVar(&po.continueCwd, "continue", false, "run the turn in the latest session of the working directory")
	cmd.Flags().StringArrayVar(&po.addDirs, "add-dir", nil, "another directory the session may read and write (repeatable), as an editor's additionalDirectories")
	cmd.Flags().StringVar(&po.mcpConfig, "mcp-config", "", "the session's MCP servers, from a JSON `FILE` {\"mcpServers\": {NAME: {\"command\", \"args\", \"env\"} or {\"type\": \"http\"|\"sse\", \"url\", \"headers\"}}} (Claude Code's format)")
	return cmd
}

// promptDir is a directory given by flag (--cwd, --add-dir) made
// absolute against the current directory, which is what --cwd is when
// not given. One that is not a directory is a mistake in the command
// line: a session there could not read or run anything.
func promptDir(flag, given string) (string, error) {
	if given == "" {
		return os.Getwd()
	}
	abs, err := filepath.Abs(given)
	if err != nil {
		return "", &config.Error{Where: flag, Value: fmt.Sprintf("%q", given), Problem: err.Error()}
	}
	switch fi, err := os.Stat(abs); {
	case errors.Is(err, fs.ErrNotExist):
		return "", &config.Error{Where: flag, Value: fmt.Sprintf("%q", given), Problem: "no such directory"}
	case err != nil:
		return "", &config.Error{Where: flag, Value: fmt.Sprintf("%q", given), Problem: err.Error()}
	case !fi.IsDir():
		return "", &config.Error{Where: flag, Value: fmt.Sprintf("%q", given), Problem: "not a directory"}
	}
	return abs, nil
}

// reportedByPrompt are the log messages of failures `dshd prompt` prints
// itself, as its "dshd: …" line: logged as well, they would show twice.
var reportedByPrompt = map[string]bool{
	"turn failed":         true, // acp/server: the prompt's error answer
	"model stream failed": true, // openai: the same failure, seen first

	// agent/session: a prompt or a session refused by a disk bound
	session.LogJournalBound: true,
	session.LogFreeBound:    true,
	session.LogStateBound:   true,
}

// shownInSession are the log messages of a session's mistakes that the
// session also shows its client as a warning, which `dshd prompt` prints
// ("⚠ …"). Only the records that name a session are such: the user's own
// agent definitions are logged without one and shown nowhere else.
var shownInSession = map[string]bool{
	"agent definition rejected": true, // acp/server: a workspace definition
	"command file rejected":     true, // acp/server: a workspace command file
}

// quietReported drops the records of reportedByPrompt and shownInSession.
type quietReported struct{ slog.Handler }

func (q quietReported) Handle(ctx context.Context, r slog.Record) error {
	if reportedByPrompt[r.Message] || shownInSession[r.Message] && hasAttr(r, "session") {
		return nil
	}
	return q.Handler.Handle(ctx, r)
}

// hasAttr reports whether r carries an attribute named key.
func hasAttr(r slog.Record, key string) bool {
	found := false
	r.Attrs(func(a slog.Attr) bool {
		found = a.Key == key
		return !found
	})
	return found
}

func (q quietReported) WithAttrs(as []slog.Attr) slog.Handler {
	return quietReported{q.Handler.WithAttrs(as)}
}

func (q quietReported) WithGroup(name string) slog.Handler {
	return quietReported{q.Handler.WithGroup(name)}
}

// promptRun is one `dshd prompt`: a client connected to the daemon over an
// in-memory pipe, one session, one turn.
type promptRun struct {
	d        *daemon.Daemon
	h        *headless
	opts     promptOpts
	cwdGiven bool
	text     string
	mode     string // a --mode to apply to a resumed session, if given

	conn *rpc.ClientSideConn
}

func (p *promptRun) run(ctx context.Context) int {
	h := p.h
	h.live.start()
	defer h.live.close()
	agentSide, clientSide := pipePair()
	served := make(chan struct{})
	srvCtx, stopServer := context.WithCancel(context.Background())
	go func() {
		defer close(served)
		_ = p.d.Server.ServeConn(srvCtx, agentSide)
	}()
	defer func() {
		clientSide.Close()
		stopServer()
		<-served
	}()
	p.conn = rpc.NewClientSideConn(clientSide, h, nil)
	defer p.conn.Close()

	if _, err := p.conn.Initialize(ctx, &acp.InitializeRequest{
		ProtocolVersion: acp.ProtocolVersion1,
		ClientInfo:      &acp.Implementation{Name: "dshd-prompt", Version: "1"},
		// Notices keep setup warnings (a rejected definition file, an MCP
		// server that did not start) out of the answer on stdout.
		ClientCapabilities: acp.ClientCapabilities{Session: acp.ClientSessionCapabilities{Notices: &acp.EmptyCapability{}}},
	}); err != nil {
		return h.fail(err)
	}
	id, fresh, err := p.session(ctx)
	if err != nil {
		return h.fail(err)
	}
	// The turn runs on its own context: Ctrl-C sends session/cancel and the
	// turn still ends with its stop reason.
	go func() {
		<-ctx.Done()
		_ = p.conn.Cancel(context.Background(), &acp.CancelNotification{SessionID: id})
	}()
	h.live.set(h.waitingForModel())
	resp, err := p.conn.Prompt(context.Background(), &acp.PromptRequest{SessionID: id, Prompt: []acp.ContentBlock{acp.TextBlock(p.text)}})
	h.live.set("")
	if err != nil {
		code := h.fail(err)
		if fresh && !h.agentActed() {
			// Nothing happened that could be continued.
			if _, derr := p.conn.DeleteSession(context.Background(), &acp.DeleteSessionRequest{SessionID: id}); derr == nil {
				return code
			}
		}
		h.said(id)
		return code
	}
	h.answered(resp.Usage)
	h.finish(resp.StopReason)
	h.said(id)
	switch {
	case resp.StopReason == acp.StopReasonCancelled:
		return exitInterrupt
	case resp.StopReason != acp.StopReasonEndTurn:
		return exitFailed
	}
	return exitOK
}

// session opens the run's session: a new one, or the stored one --resume
// or --continue names. fresh reports a new session.
func (p *promptRun) session(ctx context.Context) (id acp.SessionID, fresh bool, err error) {
	cwd := p.opts.cwd
	switch {
	case p.opts.resume != "":
		id = acp.SessionID(p.opts.resume)
		if !p.cwdGiven {
			info, err := p.find(ctx, id)
			if err != nil {
				return "", false, err
			}
			cwd = info.Cwd
		}
	case p.opts.continueCwd:
		list, err := p.conn.ListSessions(ctx, &acp.ListSessionsRequest{Cwd: cwd})
		if err != nil {
			return "", false, err
		}
		if len(list.Sessions) == 0 {
			return "", false, fmt.Errorf("no session to continue in %s (dshd sessions list shows them all)", cwd)
		}
		id = list.Sessions[0].SessionID
	default:
		sess, err := p.conn.NewSession(ctx, &acp.NewSessionRequest{Cwd: cwd, McpServers: p.opts.servers, AdditionalDirectories: p.opts.addDirs})
		if err != nil {
			return "", false, err
		}
		return sess.SessionID, true, nil
	}
	if _, err := p.conn.ResumeSession(ctx, &acp.ResumeSessionRequest{SessionID: id, Cwd: cwd, McpServers: p.opts.servers, AdditionalDirectories: p.opts.addDirs}); err != nil {
		if errors.Is(err, acp.ErrResourceNotFound) {
			return "", false, fmt.Errorf("no session %s (dshd sessions list shows them)", id)
		}
		return "", false, err
	}
	if p.mode != "" {
		if _, err := p.conn.SetSessionMode(ctx, &acp.SetSessionModeRequest{SessionID: id, ModeID: p.mode}); err != nil {
			return "", false, err
		}
	}
	return id, false, nil
}

// find looks session id up in the store's list, for its cwd.
func (p *promptRun) find(ctx context.Context, id acp.SessionID) (acp.SessionInfo, error) {
	cursor := ""
	for {
		list, err := p.conn.ListSessions(ctx, &acp.ListSessionsRequest{Cursor: cursor})
		if err != nil {
			return acp.SessionInfo{}, err
		}
		for _, s := range list.Sessions {
			if s.SessionID == id {
				return s, nil
			}
		}
		if list.NextCursor == "" {
			return acp.SessionInfo{}, fmt.Errorf("no session %s (dshd sessions list shows them)", id)
		}
		cursor = list.NextCursor
	}
}

// headless is the ACP client of `dshd prompt`.
type headless struct {
	// The editor methods: dshd prompt offers no fs/*, terminals or
	// elicitation, so the agent reads, writes and runs commands itself.
	noeditor.Methods

	out     io.Writer
	live    *liveLine // stderr
	json    bool
	allow   bool
	model   string
	timeout time.Duration

	mu      sync.Mutex
	r       renderer
	acted   bool                      // the agent answered, thought or called a tool
	titles  map[acp.ToolCallID]string // every tool call's title, for the live line
	running map[acp.ToolCallID]string // the tool calls in progress
	usage   turnUsage                 // what the turn spent, per subagent too (--json)
}

func (h *headless) writeJSON(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	h.live.before(h.out).Write(append(b, '\n'))
}

// fail prints err once, as the run's failure.
func (h *headless) fail(err error) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	var ae *acp.Error
	msg := err.Error()
	if errors.As(err, &ae) {
		msg = ae.Reason()
	}
	if h.json {
		// The same words as the text line; the JSON-RPC code for a
		// script that tells failures apart.
		line := map[string]any{"error": msg}
		if ae != nil {
			line["code"] = ae.Code
		}
		h.writeJSON(line)
	}
	h.r.endLine()
	fmt.Fprintln(h.live, "dshd:", msg)
	return exitFailed
}

func (h *headless) finish(r acp.StopReason) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.json {
		line := map[string]any{"stopReason": r}
		h.usage.summary(line)
		h.writeJSON(line)
		return
	}
	h.r.endLine()
	if r != acp.StopReasonEndTurn {
		fmt.Fprintf(h.live, "dshd: the turn ended: %s\n", r)
	}
}

// said prints the session the run used, and how to go on with it.
func (h *headless) said(id acp.SessionID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fmt.Fprintf(h.live, "dshd: session %s (to continue it: dshd prompt --resume %s …)\n", id, id)
}

func (h *headless) agentActed() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.acted
}

// waitingForModel says what a run waiting for the model waits for.
func (h *headless) waitingForModel() string {
	what := "waiting for the model"
	if h.model != "" {
		what += " " + h.model
	}
	if h.timeout > 0 {
		what += fmt.Sprintf(" (--model-timeout %s)", h.timeout)
	}
	return what
}

// SessionUpdate prints the answer and the tool activity, and keeps the
// live line saying what the run waits for.
func (h *headless) SessionUpdate(_ context.Context, n *acp.SessionNotification) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.json {
		switch n.Update.(type) {
		case *acp.AgentMessageChunk, *acp.AgentThoughtChunk, *acp.ToolCall, *acp.ToolCallUpdate:
			h.acted = true
		}
		h.writeJSON(n)
		h.usage.observe(n.Update)
	} else if h.r.update(n) {
		h.acted = true
	}
	h.track(n.Update)
	return nil
}

// track moves the live line on: the model thinking or writing, a tool
// running, the model again once every tool is done.
func (h *headless) track(u acp.SessionUpdate) {
	switch u := u.(type) {
	case *acp.AgentThoughtChunk:
		h.live.set("the model is thinking")
	case *acp.AgentMessageChunk:
		if h.r.midLine {
			h.live.set("") // the answer is being written on this terminal
		} else {
			h.live.set("the model is writing")
		}
	case *acp.ToolCall:
		if h.titles == nil {
			h.titles = map[acp.ToolCallID]string{}
		}
		h.titles[u.ToolCallID] = u.Title
	case *acp.ToolCallUpdate:
		if h.running == nil {
			h.running = map[acp.ToolCallID]string{}
		}
		if u.Title != "" && h.titles != nil {
			h.titles[u.ToolCallID] = u.Title
		}
		if u.Status == "" {
			return // output or a new title: the wait is the same
		}
		switch u.Status {
		case acp.ToolCallStatusInProgress:
			h.running[u.ToolCallID] = h.titles[u.ToolCallID]
		case acp.ToolCallStatusCompleted, acp.ToolCallStatusFailed:
			delete(h.running, u.ToolCallID)
		}
		for _, title := range h.running {
			h.live.set("running " + title)
			return
		}
		h.live.set(h.waitingForModel())
	}
}

// metaRefused, true on a rejection, says no person gave it; acp/server
// then tells the model the action was refused without asking anyone.
const metaRefused = "dshd.dev/refused"

// RequestPermission answers every request the same way: --yes allows,
// otherwise rejects (a headless run has nobody to ask).
func (h *headless) RequestPermission(_ context.Context, req *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
	want := acp.PermissionRejectOnce
	if h.allow {
		want = acp.PermissionAllowOnce
	}
	for _, o := range req.Options {
		if o.Kind == want {
			// On stderr with --json too: the question and its answer are
			// no session/update, so the JSON stream does not have them, and
			// the job's log keeps a line per approved action.
			h.mu.Lock()
			if h.allow {
				fmt.Fprintf(h.live, "? %s: allowed (--yes)\n", req.ToolCall.Title)
			} else {
				fmt.Fprintf(h.live, "? %s: rejected (no one to ask; --yes allows it)\n", req.ToolCall.Title)
			}
			h.mu.Unlock()
			resp := &acp.RequestPermissionResponse{Outcome: acp.Selected(o.OptionID)}
			if !h.allow {
				// Nobody rejected it: the model is told it was refused
				// without asking anyone, not to ask the user.
				resp.Meta = acp.Meta{metaRefused: true}
			}
			return resp, nil
		}
	}
	return &acp.RequestPermissionResponse{Outcome: &acp.CancelledPermissionOutcome{}}, nil
}

// pipePair returns the two ends of an in-memory full-duplex connection.
func pipePair() (io.ReadWriteCloser, io.ReadWriteCloser) {
	ar, bw := io.Pipe()
	br, aw := io.Pipe()
	return &pipeEnd{ar, aw}, &pipeEnd{br, bw}
}

type pipeEnd struct {
	*io.PipeReader
	*io.PipeWriter
}

func (p *pipeEnd) Close() error {
	p.PipeReader.Close()
	return p.PipeWriter.Close()
}
