//go:build unix

package acpprovider_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dshd/dshd/acp"

	"github.com/dshd/dshd/acp/rpc"
	"github.com/dshd/dshd/internal/noeditor"
)

// topClient is the editor at the top of a chain: it opted in to subagent
// sessions, records every update and answers permission questions.
type topClient struct {
	noeditor.Methods // fs/*, terminal/* and elicitation: method not found

	answer string // the option id chosen for every question

	mu      sync.Mutex
	updates []*acp.SessionNotification
	asked   []*acp.RequestPermissionRequest
	running chan acp.SessionID // children reported running
}

func (c *topClient) SessionUpdate(_ context.Context, n *acp.SessionNotification) error {
	c.mu.Lock()
	c.updates = append(c.updates, n)
	c.mu.Unlock()
	if u, ok := n.Update.(*acp.SubagentUpdate); ok {
		if s, ok := u.State.Get(); ok && s.StateName() == acp.StateRunning {
			select {
			case c.running <- u.SessionID:
			default:
			}
		}
	}
	return nil
}

// clearUpdates forgets the updates recorded so far.
func (c *topClient) clearUpdates() {
	c.mu.Lock()
	c.updates = nil
	c.mu.Unlock()
}

func (c *topClient) RequestPermission(_ context.Context, req *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.asked = append(c.asked, req)
	c.mu.Unlock()
	return &acp.RequestPermissionResponse{Outcome: acp.Selected(c.answer)}, nil
}

// parentDshd is a real parent dshd driven by a topClient.
type parentDshd struct {
	conn    *rpc.ClientSideConn
	session acp.SessionID
	cwd     string
	cmd     *exec.Cmd
	done    chan struct{}
}

type pipeRWC struct {
	io.Reader
	io.WriteCloser
}

// startParentDshd runs `dshd serve` on parent.json with an acp binding
// subagent_acp to a child dshd on childScript, and opens a session.
func startParentDshd(t *testing.T, cl *topClient, childScript string) *parentDshd {
	t.Helper()
	return startParentDshdWith(t, cl, "subagent_acp=acp,command="+dshdBin+",args="+strings.Join(dshdArgs(t, childScript), " "))
}

// startParentDshdWith runs `dshd serve` on parent.json with binding and
// opens a session.
func startParentDshdWith(t *testing.T, cl *topClient, binding string) *parentDshd {
	t.Helper()
	cmd := exec.Command(dshdBin, dshdArgs(t, "parent.json", "--subagent", binding)...)
	cmd.Stderr = os.Stderr
	conn := startOnStdio(t, cmd, cl)
	pd := &parentDshd{conn: conn, cmd: cmd, done: make(chan struct{}), cwd: t.TempDir()}
	go func() {
		cmd.Wait()
		close(pd.done)
	}()
	t.Cleanup(pd.stop)
	pd.session = handshake(t, t.Context(), pd.conn, acp.ClientCapabilities{Subagents: &acp.SubagentCapabilities{}}, pd.cwd)
	return pd
}

// startOnStdio starts cmd and connects cl to the agent on its stdio.
func startOnStdio(tb testing.TB, cmd *exec.Cmd, cl *topClient) *rpc.ClientSideConn {
	tb.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	return rpc.NewClientSideConn(pipeRWC{stdout, stdin}, cl, nil)
}

// dialUnix connects cl to the daemon on the unix socket sock; the
// connection closes when the test ends.
func dialUnix(tb testing.TB, sock string, cl *topClient) *rpc.ClientSideConn {
	tb.Helper()
	nc, err := net.Dial("unix", sock)
	if err != nil {
		tb.Fatal(err)
	}
	conn := rpc.NewClientSideConn(nc, cl, nil)
	tb.Cleanup(func() { conn.Close() })
	return conn
}

// handshake initializes conn as a client with caps and opens a session in
// cwd.
func handshake(tb testing.TB, ctx context.Context, conn *rpc.ClientSideConn, caps acp.ClientCapabilities, cwd string) acp.SessionID {
	tb.Helper()
	if _, err := conn.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: caps}); err != nil {
		tb.Fatal(err)
	}
	s, err := conn.NewSession(ctx, &acp.NewSessionRequest{Cwd: cwd})
	if err != nil {
		tb.Fatal(err)
	}
	return s.SessionID
}

// endTurn prompts the parent with text and fails the test unless the
// turn ends with end_turn.
func (pd *parentDshd) endTurn(t *testing.T, text string) {
	t.Helper()
	resp, err := pd.conn.Prompt(t.Context(), &acp.PromptRequest{SessionID: pd.session, Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("stop reason %s", resp.StopReason)
	}
}

// stop closes the connection (dshd exits on stdin EOF) and reaps dshd.
func (pd *parentDshd) stop() {
	pd.conn.Close()
	<-pd.done
}

// toolResult is the text of the parent's last finished tool call.
func toolResult(cl *topClient, session acp.SessionID) string {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	var last string
	for _, n := range cl.updates {
		u, ok := n.Update.(*acp.ToolCallUpdate)
		if !ok || n.SessionID != session || (u.Status != acp.ToolCallStatusCompleted && u.Status != acp.ToolCallStatusFailed) {
			continue
		}
		last = toolText(u)
	}
	return last
}

// toolText is the text content of a tool call update.
func toolText(u *acp.ToolCallUpdate) string {
	var b strings.Builder
	for _, c := range u.Content {
		if tc, ok := c.(*acp.ToolContent); ok {
			if text, ok := tc.Content.(*acp.TextContent); ok {
				b.WriteString(text.Text)
			}
		}
	}
	return b.String()
}

// toolOutputs is the text of the parent's tool call updates.
func toolOutputs(cl *topClient, session acp.SessionID) string {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	var b strings.Builder
	for _, n := range cl.updates {
		if u, ok := n.Update.(*acp.ToolCallUpdate); ok && n.SessionID == session {
			b.WriteString(toolText(u))
		}
	}
	return b.String()
}

func TestE2E_AGrandchildsPermissionQuestionReachesTheTopClient(t *testing.T) {
	cl := &topClient{answer: "allow_once", running: make(chan acp.SessionID, 10)}
	pd := startParentDshd(t, cl, "delegate.json")
	pd.endTurn(t, "go delegate the report")
	b, err := os.ReadFile(filepath.Join(pd.cwd, "report.txt"))
	if err != nil || string(b) != "from the grandchild" {
		t.Fatalf("report.txt = %q, %v; the parent's tool said %q", b, err, toolOutputs(cl, pd.session))
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	parentOf := map[acp.SessionID]acp.SessionID{}
	for _, n := range cl.updates {
		if u, ok := n.Update.(*acp.SubagentUpdate); ok {
			if _, seen := parentOf[u.SessionID]; !seen {
				parentOf[u.SessionID] = n.SessionID
			}
		}
	}
	if len(cl.asked) != 1 {
		t.Fatalf("%d questions asked", len(cl.asked))
	}
	q := cl.asked[0]
	child, ok := parentOf[q.SessionID]
	if !ok || child == pd.session || parentOf[child] != pd.session {
		raw, _ := json.Marshal(parentOf)
		t.Fatalf("the question was asked on %s; announcements (child → parent): %s", q.SessionID, raw)
	}
}

func TestE2E_CancelAtTheTopLeavesNoProcessBehind(t *testing.T) {
	cl := &topClient{answer: "allow_once", running: make(chan acp.SessionID, 10)}
	pd := startParentDshd(t, cl, "delegate.json")
	answered := make(chan *acp.PromptResponse, 1)
	go func() {
		resp, err := pd.conn.Prompt(context.Background(), &acp.PromptRequest{SessionID: pd.session, Prompt: []acp.ContentBlock{acp.TextBlock("go hang")}})
		if err != nil {
			t.Error(err)
		}
		answered <- resp
	}()
	select {
	case resp := <-answered:
		t.Fatalf("the turn ended before it was cancelled: %+v; the parent's tool said %q", resp, toolOutputs(cl, pd.session))
	case <-cl.running:
	}
	if err := pd.conn.Cancel(t.Context(), &acp.CancelNotification{SessionID: pd.session}); err != nil {
		t.Fatal(err)
	}
	if resp := recv(t, answered); resp == nil || resp.StopReason != acp.StopReasonCancelled {
		t.Fatalf("the turn answered %+v", resp)
	}
	pd.stop()
	checkNoProcesses(t)
}

func TestE2E_ASocketDaemonsDefaultChildServesItsStdio(t *testing.T) {
	// The parent daemon listens because of DSHD_LISTEN in its environment;
	// its default child (dshd itself, with the parent's settings) inherits
	// that environment and must still serve its stdio.
	sock := filepath.Join(t.TempDir(), "parent.sock")
	cmd := exec.Command(dshdBin, dshdArgs(t, "parent.json", "--subagent", "subagent_acp=acp")...)
	cmd.Env = append(os.Environ(), "DSHD_LISTEN=unix:"+sock)
	startDaemon(t, cmd, (*exec.Cmd).StderrPipe, func(line string) (string, bool) {
		return sock, strings.Contains(line, "dshd listening")
	})
	cl := &topClient{running: make(chan acp.SessionID, 10)}
	conn := dialUnix(t, sock, cl)
	ctx := t.Context()
	sid := handshake(t, ctx, conn, acp.ClientCapabilities{}, t.TempDir())
	if _, err := conn.Prompt(ctx, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("go hi")}}); err != nil {
		t.Fatal(err)
	}
	out := toolResult(cl, sid)
	// The child ran and answered with its final message.
	if !strings.HasPrefix(out, "Parent done:") {
		t.Fatalf("the parent's tool said %q", out)
	}
}

// The seed's "resolves error (not reject) when the spawn command does not
// exist", followed to the model: the tool call fails with the reason, the
// parent's model reads it and finishes its turn, and the editor is never
// shown a child that did not exist.
func TestE2E_ANonexistentCommandIsAFailedToolCallTheModelReads(t *testing.T) {
	cl := &topClient{answer: "allow_once", running: make(chan acp.SessionID, 10)}
	// A relative path: the parent looks a program up at start, and this
	// one is missing only in the session's cwd, where the run starts it.
	pd := startParentDshdWith(t, cl, "subagent_acp=acp,command=./nonexistent/acp-agent-binary")
	pd.endTurn(t, "go do the thing")
	out := toolResult(cl, pd.session)
	for _, want := range []string{"The subagent run failed", "could not be started", "/nonexistent/acp-agent-binary"} {
		if !strings.Contains(out, want) {
			t.Errorf("the tool result %q lacks %q", out, want)
		}
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	failed, said := false, ""
	for _, n := range cl.updates {
		switch u := n.Update.(type) {
		case *acp.ToolCallUpdate:
			failed = failed || u.Status == acp.ToolCallStatusFailed
		case *acp.AgentMessageChunk:
			if tc, ok := u.Content.(*acp.TextContent); ok && n.SessionID == pd.session {
				said += tc.Text
			}
		case *acp.SubagentUpdate:
			t.Errorf("a child that never started was announced: %+v", u)
		}
	}
	if !failed {
		t.Error("the tool call did not end failed")
	}
	_, read, _ := strings.Cut(said, "Parent done: ")
	if !strings.Contains(read, "The subagent run failed. The agent acp-agent-binary could not be started") || !strings.Contains(read, "/nonexistent/acp-agent-binary") {
		t.Errorf("the parent's model did not read the failure; it said %q", said)
	}
}
