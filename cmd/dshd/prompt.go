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
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/cmd/dshd/internal/config"
	"github.com/dshd/dshd/cmd/dshd/internal/daemon"

	"github.com/dshd/dshd/acp/rpc"
)

// Exit codes of `dshd prompt`.
const (
	exitOK        = 0
	exitFailed    = 1
	exitInterrupt = 130
)

func newPromptCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	var jsonOut, allow bool
	var cwd string
	cmd := &cobra.Command{
		Use:   `prompt "TEXT"`,
		Short: "Run one prompt turn headlessly: the answer on stdout, tool activity on stderr",
		Long: `Run one prompt turn and exit: 0 on end_turn, 1 on an error or another stop
reason, 130 when interrupted (Ctrl-C cancels the turn cleanly). With --json,
stdout is a JSONL stream of events: each session/update, then {"stopReason":…}
or {"error":…}. "-" as TEXT reads the prompt from stdin.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := config.Load(cmd.Flags(), os.LookupEnv)
			if err != nil {
				return err
			}
			log, err := newLogger(stderr, st.LogLevel, st.LogFormat)
			if err != nil {
				return err
			}
			text := args[0]
			if text == "-" {
				b, err := io.ReadAll(stdin)
				if err != nil {
					return err
				}
				text = string(b)
			}
			if cwd == "" {
				if cwd, err = os.Getwd(); err != nil {
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
			code := runPrompt(ctx, d, cwd, text, &headless{out: stdout, errw: stderr, json: jsonOut, allow: allow})
			if code != exitOK {
				return &exitError{code: code}
			}
			return nil
		},
	}
	config.AddFlags(cmd.Flags(), config.Prompt)
	cmd.Flags().BoolVar(&jsonOut, "json", false, "write a JSONL stream of events to stdout")
	cmd.Flags().BoolVar(&allow, "yes", false, "answer every permission request with allow (default: reject; or use --mode yolo)")
	cmd.Flags().StringVar(&cwd, "cwd", "", "the session's working directory (default: the current directory)")
	return cmd
}

// runPrompt connects a client to the daemon over an in-memory pipe and
// runs one turn.
func runPrompt(ctx context.Context, d *daemon.Daemon, cwd, text string, h *headless) int {
	agentSide, clientSide := pipePair()
	served := make(chan struct{})
	srvCtx, stopServer := context.WithCancel(context.Background())
	go func() {
		defer close(served)
		_ = d.Server.ServeConn(srvCtx, agentSide)
	}()
	defer func() {
		clientSide.Close()
		stopServer()
		<-served
	}()
	conn := rpc.NewClientSideConn(clientSide, h, nil)
	defer conn.Close()

	if _, err := conn.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersion1, ClientInfo: &acp.Implementation{Name: "dshd-prompt", Version: "1"}}); err != nil {
		return h.fail(err)
	}
	sess, err := conn.NewSession(ctx, &acp.NewSessionRequest{Cwd: cwd, McpServers: []acp.McpServer{}})
	if err != nil {
		return h.fail(err)
	}
	// The turn runs on its own context: Ctrl-C sends session/cancel and the
	// turn still ends with its stop reason.
	go func() {
		<-ctx.Done()
		_ = conn.Cancel(context.Background(), &acp.CancelNotification{SessionID: sess.SessionID})
	}()
	resp, err := conn.Prompt(context.Background(), &acp.PromptRequest{SessionID: sess.SessionID, Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
	if err != nil {
		return h.fail(err)
	}
	h.finish(resp.StopReason)
	switch {
	case resp.StopReason == acp.StopReasonCancelled:
		return exitInterrupt
	case resp.StopReason != acp.StopReasonEndTurn:
		return exitFailed
	}
	return exitOK
}

// headless is the ACP client of `dshd prompt`.
type headless struct {
	out, errw io.Writer
	json      bool
	allow     bool

	mu       sync.Mutex
	lastText bool // the answer so far ends without a newline
	titles   map[acp.ToolCallID]string
}

func (h *headless) writeJSON(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	h.out.Write(append(b, '\n'))
}

func (h *headless) fail(err error) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.json {
		h.writeJSON(map[string]any{"error": err.Error()})
	}
	var ae *acp.Error
	msg := err.Error()
	if errors.As(err, &ae) {
		msg = ae.Message
		if m, ok := ae.Data.(map[string]any); ok {
			if r, ok := m["reason"].(string); ok && !strings.Contains(msg, r) {
				msg += ": " + r
			}
		}
	}
	fmt.Fprintln(h.errw, "dshd:", msg)
	return exitFailed
}

func (h *headless) finish(r acp.StopReason) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.json {
		h.writeJSON(map[string]any{"stopReason": r})
		return
	}
	if h.lastText {
		fmt.Fprintln(h.out)
	}
	if r != acp.StopReasonEndTurn {
		fmt.Fprintf(h.errw, "dshd: the turn ended: %s\n", r)
	}
}

// SessionUpdate prints the answer and the tool activity.
func (h *headless) SessionUpdate(_ context.Context, n *acp.SessionNotification) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.json {
		h.writeJSON(n)
		return nil
	}
	switch u := n.Update.(type) {
	case *acp.AgentMessageChunk:
		if t, ok := u.Content.(*acp.TextContent); ok {
			io.WriteString(h.out, t.Text)
			h.lastText = !strings.HasSuffix(t.Text, "\n")
		}
	case *acp.ToolCall:
		if h.titles == nil {
			h.titles = map[acp.ToolCallID]string{}
		}
		h.titles[u.ToolCallID] = u.Title
		fmt.Fprintf(h.errw, "→ %s\n", u.Title)
	case *acp.ToolCallUpdate:
		switch u.Status {
		case acp.ToolCallStatusCompleted:
			fmt.Fprintf(h.errw, "✓ %s\n", h.titles[u.ToolCallID])
		case acp.ToolCallStatusFailed:
			fmt.Fprintf(h.errw, "✗ %s\n", h.titles[u.ToolCallID])
		}
	}
	return nil
}

// RequestPermission answers every request the same way: --yes allows,
// otherwise rejects (a headless run has nobody to ask).
func (h *headless) RequestPermission(_ context.Context, req *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
	want := acp.PermissionRejectOnce
	if h.allow {
		want = acp.PermissionAllowOnce
	}
	for _, o := range req.Options {
		if o.Kind == want {
			h.mu.Lock()
			if !h.json {
				verb := "rejected"
				if h.allow {
					verb = "allowed"
				}
				fmt.Fprintf(h.errw, "? %s: %s (headless; --yes or --mode yolo to allow)\n", req.ToolCall.Title, verb)
			}
			h.mu.Unlock()
			return &acp.RequestPermissionResponse{Outcome: acp.Selected(o.OptionID)}, nil
		}
	}
	return &acp.RequestPermissionResponse{Outcome: &acp.CancelledPermissionOutcome{}}, nil
}

var errUnsupported = acp.ErrMethodNotFound

func (h *headless) ReadTextFile(context.Context, *acp.ReadTextFileRequest) (*acp.ReadTextFileResponse, error) {
	return nil, errUnsupported
}
func (h *headless) WriteTextFile(context.Context, *acp.WriteTextFileRequest) (*acp.WriteTextFileResponse, error) {
	return nil, errUnsupported
}
func (h *headless) CreateTerminal(context.Context, *acp.CreateTerminalRequest) (*acp.CreateTerminalResponse, error) {
	return nil, errUnsupported
}
func (h *headless) TerminalOutput(context.Context, *acp.TerminalOutputRequest) (*acp.TerminalOutputResponse, error) {
	return nil, errUnsupported
}
func (h *headless) WaitForTerminalExit(context.Context, *acp.WaitForTerminalExitRequest) (*acp.WaitForTerminalExitResponse, error) {
	return nil, errUnsupported
}
func (h *headless) KillTerminal(context.Context, *acp.KillTerminalRequest) (*acp.KillTerminalResponse, error) {
	return nil, errUnsupported
}
func (h *headless) ReleaseTerminal(context.Context, *acp.ReleaseTerminalRequest) (*acp.ReleaseTerminalResponse, error) {
	return nil, errUnsupported
}
func (h *headless) CreateElicitation(context.Context, *acp.CreateElicitationRequest) (*acp.CreateElicitationResponse, error) {
	return nil, errUnsupported
}
func (h *headless) CompleteElicitation(context.Context, *acp.CompleteElicitationNotification) error {
	return nil
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
