//go:build unix

package acpprovider_test

// The test binary doubles as a fake ACP agent with exact, scriptable
// behaviour: the provider's client side is tested against it over real
// pipes and sockets. Its mode (env ACPPROVIDER_FAKE_AGENT) sets how it
// starts; the prompt text says what it does in a turn:
//
//	echo TEXT        answer "echo: TEXT"
//	pid              send "pid=N" and hang until cancelled
//	stderr WORD      write WORD to stderr, then hang ignoring cancel
//	exit N           write "dying" to stderr, exit N mid-turn
//	garbage          write a non-JSON line to stdout mid-turn
//	hang             hang until cancelled (answers cancelled)
//	hangforever      hang, ignoring cancel
//	count            answer "conns=N sessions=M"
//	probe            call the client in ways it must refuse; answer the codes
//	permission       ask permission; answer the option chosen
//	write PATH TEXT  fs/write_text_file; answer "ok" or the error code
//	read PATH        fs/read_text_file; answer the content or the error code
//	term WORDS       run a terminal; answer its output and exit code (and
//	                 "truncated" when the output was cut)
//	relay            announce a child of its own and drive traffic on it
//	chunks A|B|C     send the parts as separate messages with tool calls between
//	caps             answer the client capabilities it was offered
//	permwrite P TEXT ask permission to edit P, then write it
//	session          answer what session/new got: cwd, roots, MCP servers, _meta, and the process's cwd
//	env NAME...      answer "NAME=value" or "NAME unset" for each name, from its own environment
//	touch PATH...    create each file itself; dial ADDR: connect over TCP (sandbox_test.go)
//	stop REASON TEXT send TEXT, then end the turn with stop reason REASON
//	think TEXT       send a thought, then TEXT
//	deaf             send "ready", then ignore session/cancel
//	crashoncancel    send "ready", then exit hard when cancelled instead of answering
//	fail DATA        fail the prompt with -32603 "Internal error" and DATA (JSON) as data
//	prompt           answer the whole prompt text received
//	answers A || B   send A; answer the session's next prompt with B, if that
//	                 prompt says the answer did not match the schema (the
//	                 context is 1000 tokens after A, 1400 after B)
//	used A B         report the context as A then B tokens (usage_update, no _meta), answer "ok"
//	spend N K        K calls, each a line "call I" of one message and a report of N
//	                 tokens (usage_update with dshd.dev/usage), taking no budget into
//	                 account; then hang: only session/cancel ends the turn (the line
//	                 "cancelled", answers cancelled)

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/subagents"
	acpprovider "github.com/dshd/dshd/subagents/acp"

	"github.com/dshd/dshd/acp/rpc"
)

// Fake agent start modes.
const (
	modeAgent    = "agent"    // an ordinary agent on stdio
	modeNoInit   = "noinit"   // never answers initialize
	modeBanner   = "banner"   // prints a banner on stdout first
	modeStubborn = "stubborn" // ignores stdin EOF and SIGTERM, starts a helper
	modeListen   = "listen"   // serves ACP on ACPPROVIDER_FAKE_ADDR (unix:PATH, tcp:HOST:PORT)
	modeNoResume = "noresume" // advertises neither resume nor load
	modeLoadOnly = "loadonly" // advertises load but not resume
	modeParent   = "parent"   // a parent process: starts a fake agent child, prints its pid, waits to be killed
	// modeFlush flushes slowly on stdin EOF: it waits flushTime, writes
	// the file fakeMarkerEnv names, and exits; SIGTERM kills it at once.
	modeFlush = "flush"
	// modeTermFlush ignores stdin EOF; on SIGTERM it writes the file
	// fakeMarkerEnv names and exits.
	modeTermFlush = "termflush"
	// modeSlowNew announces each session/new on the FIFO fakeFIFOEnv
	// names and never answers it.
	modeSlowNew   = "slownew"
	fakeAddrEnv   = "ACPPROVIDER_FAKE_ADDR"
	fakeMarkerEnv = "ACPPROVIDER_FAKE_MARKER"
	fakeFIFOEnv   = "ACPPROVIDER_FAKE_FIFO"
	// flushTime is how long a flushing fake takes: far longer than the
	// SIGTERM grace of the test that uses it, far shorter than its EOF
	// grace.
	flushTime = 300 * time.Millisecond
	// fakeNoHelperEnv, when set, keeps a stubborn fake from starting its
	// helper.
	fakeNoHelperEnv = "ACPPROVIDER_FAKE_NOHELPER"
	// fakeTokenEnv, when set, is the token a listening fake requires.
	fakeTokenEnv = "ACPPROVIDER_FAKE_TOKEN"
)

func fakeAgentMain(mode string) int {
	switch mode {
	case modeNoInit:
		// Read and ignore everything until stdin closes.
		buf := make([]byte, 4096)
		for {
			if _, err := os.Stdin.Read(buf); err != nil {
				return 0
			}
		}
	case modeBanner:
		fmt.Println("Welcome to the fake agent v0!")
	case modeStubborn:
		signal.Ignore(syscall.SIGTERM)
		if os.Getenv(fakeNoHelperEnv) == "" {
			helper := exec.Command("sleep", "300")
			if err := helper.Start(); err != nil {
				fmt.Fprintln(os.Stderr, "helper:", err)
			}
		}
		serveStdio(mode)
		// Ignore stdin EOF: carry on until killed.
		for {
			time.Sleep(time.Hour)
		}
	case modeTermFlush:
		terms := make(chan os.Signal, 1)
		signal.Notify(terms, syscall.SIGTERM)
		go func() {
			<-terms
			os.WriteFile(os.Getenv(fakeMarkerEnv), []byte("sigterm"), 0o644)
			os.Exit(0)
		}()
		serveStdio(mode)
		for {
			time.Sleep(time.Hour)
		}
	case modeFlush:
		serveStdio(mode)
		time.Sleep(flushTime)
		if err := os.WriteFile(os.Getenv(fakeMarkerEnv), []byte("flushed"), 0o644); err != nil {
			return 1
		}
		return 0
	case modeListen:
		return fakeListen(os.Getenv(fakeAddrEnv))
	case modeParent:
		return fakeParent()
	case modeReads:
		return readsAgentMain()
	}
	serveStdio(mode)
	return 0
}

// serveStdio serves one fake agent of mode on stdin and stdout until the
// connection ends.
func serveStdio(mode string) {
	fa := newFake(mode)
	conn := rpc.NewAgentSideConn(stdio{}, fa, nil)
	fa.client.Store(conn)
	<-conn.Done()
}

// fakeListen serves many connections on a unix socket until killed.
func fakeListen(addr string) int {
	network, where, _ := strings.Cut(addr, ":")
	l, err := net.Listen(network, where)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// Tell the test where it listens (a tcp port is chosen here).
	fmt.Printf("listening %s:%s\n", network, l.Addr().String())
	shared := &fakeShared{}
	for {
		nc, err := l.Accept()
		if err != nil {
			return 1
		}
		shared.conns.Add(1)
		fa := newFake(modeListen)
		fa.shared = shared
		fa.token = os.Getenv(fakeTokenEnv)
		conn := rpc.NewAgentSideConn(nc, fa, nil)
		fa.client.Store(conn)
	}
}

type stdio struct{}

func (stdio) Read(b []byte) (int, error)  { return os.Stdin.Read(b) }
func (stdio) Write(b []byte) (int, error) { return os.Stdout.Write(b) }
func (stdio) Close() error                { return os.Stdin.Close() }

type fakeShared struct {
	conns    atomic.Int64
	sessions atomic.Int64
}

type fakeAgent struct {
	mode   string
	token  string // required through authenticate when set
	authed atomic.Bool
	caps   atomic.Pointer[acp.ClientCapabilities]
	client atomic.Pointer[rpc.AgentSideConn]
	shared *fakeShared

	mu       sync.Mutex
	seq      int
	cancels  map[acp.SessionID]chan struct{}
	sessions map[acp.SessionID]bool
	news     map[acp.SessionID]*acp.NewSessionRequest
	queued   map[acp.SessionID][]string // the next prompts' answers (answers)
}

func newFake(mode string) *fakeAgent {
	return &fakeAgent{mode: mode, cancels: map[acp.SessionID]chan struct{}{}, sessions: map[acp.SessionID]bool{}, news: map[acp.SessionID]*acp.NewSessionRequest{}, queued: map[acp.SessionID][]string{}, shared: &fakeShared{}}
}

func (f *fakeAgent) Initialize(ctx context.Context, req *acp.InitializeRequest) (*acp.InitializeResponse, error) {
	caps := req.ClientCapabilities
	f.caps.Store(&caps)
	resp := &acp.InitializeResponse{
		ProtocolVersion: acp.ProtocolVersion1,
		AgentCapabilities: acp.AgentCapabilities{
			LoadSession: true,
			SessionCapabilities: acp.SessionCapabilities{
				Resume:                &acp.EmptyCapability{},
				Close:                 &acp.EmptyCapability{},
				AdditionalDirectories: &acp.EmptyCapability{},
			},
			McpCapabilities: acp.McpCapabilities{HTTP: true},
		},
		AgentInfo: &acp.Implementation{Name: "fake", Version: "0"},
	}
	if f.mode == modeNoResume {
		resp.AgentCapabilities.LoadSession = false
		resp.AgentCapabilities.SessionCapabilities.Resume = nil
	}
	if f.mode == modeLoadOnly {
		resp.AgentCapabilities.SessionCapabilities.Resume = nil
	}
	if f.token != "" {
		resp.AuthMethods = []acp.AuthMethod{&acp.AuthMethodAgent{ID: "token", Name: "token"}}
	}
	return resp, nil
}

func (f *fakeAgent) Authenticate(ctx context.Context, req *acp.AuthenticateRequest) (*acp.AuthenticateResponse, error) {
	if tok, _ := req.Meta["dshd.dev/token"].(string); tok != f.token {
		return nil, acp.ErrAuthRequired.WithData(map[string]any{"reason": "wrong token"})
	}
	f.authed.Store(true)
	return &acp.AuthenticateResponse{}, nil
}

func (f *fakeAgent) Logout(context.Context, *acp.LogoutRequest) (*acp.LogoutResponse, error) {
	return nil, acp.ErrMethodNotFound
}

func (f *fakeAgent) NewSession(ctx context.Context, req *acp.NewSessionRequest) (*acp.NewSessionResponse, error) {
	if f.mode == modeSlowNew {
		rpc.Detach(ctx)
		if fifo, err := os.OpenFile(os.Getenv(fakeFIFOEnv), os.O_WRONLY, 0); err == nil {
			fifo.WriteString("session/new\n")
			fifo.Close()
		}
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if f.token != "" && !f.authed.Load() {
		return nil, acp.ErrAuthRequired.WithData(map[string]any{"reason": "authenticate first"})
	}
	f.mu.Lock()
	f.seq++
	id := acp.SessionID(fmt.Sprintf("fs_%d_%d", os.Getpid(), f.seq))
	f.sessions[id] = true
	f.news[id] = req
	f.mu.Unlock()
	f.shared.sessions.Add(1)
	// Like dshd, send an update right after the answer.
	rpc.AfterReply(ctx, func() {
		f.update(id, &acp.UsageUpdate{Used: 1, Size: 100})
	})
	return &acp.NewSessionResponse{SessionID: id}, nil
}

func (f *fakeAgent) LoadSession(ctx context.Context, req *acp.LoadSessionRequest) (*acp.LoadSessionResponse, error) {
	f.mu.Lock()
	f.sessions[req.SessionID] = true
	f.mu.Unlock()
	// Replay: an old message the client must not show again.
	f.update(req.SessionID, &acp.AgentMessageChunk{Content: acp.TextBlock("replayed"), MessageID: "old"})
	return &acp.LoadSessionResponse{}, nil
}

func (f *fakeAgent) ForkSession(context.Context, *acp.ForkSessionRequest) (*acp.ForkSessionResponse, error) {
	return nil, acp.ErrMethodNotFound
}

func (f *fakeAgent) ResumeSession(ctx context.Context, req *acp.ResumeSessionRequest) (*acp.ResumeSessionResponse, error) {
	f.mu.Lock()
	f.sessions[req.SessionID] = true
	f.mu.Unlock()
	return &acp.ResumeSessionResponse{}, nil
}

func (f *fakeAgent) CloseSession(ctx context.Context, req *acp.CloseSessionRequest) (*acp.CloseSessionResponse, error) {
	f.mu.Lock()
	delete(f.sessions, req.SessionID)
	f.mu.Unlock()
	return &acp.CloseSessionResponse{}, nil
}

func (f *fakeAgent) ListSessions(context.Context, *acp.ListSessionsRequest) (*acp.ListSessionsResponse, error) {
	return &acp.ListSessionsResponse{}, nil
}

func (f *fakeAgent) DeleteSession(context.Context, *acp.DeleteSessionRequest) (*acp.DeleteSessionResponse, error) {
	return &acp.DeleteSessionResponse{}, nil
}

func (f *fakeAgent) SetSessionMode(context.Context, *acp.SetSessionModeRequest) (*acp.SetSessionModeResponse, error) {
	return nil, acp.ErrMethodNotFound
}

func (f *fakeAgent) SetSessionConfigOption(context.Context, *acp.SetSessionConfigOptionRequest) (*acp.SetSessionConfigOptionResponse, error) {
	return nil, acp.ErrMethodNotFound
}

func (f *fakeAgent) Cancel(ctx context.Context, n *acp.CancelNotification) error {
	f.mu.Lock()
	ch := f.cancels[n.SessionID]
	delete(f.cancels, n.SessionID)
	f.mu.Unlock()
	if ch != nil {
		close(ch)
	}
	return nil
}

func (f *fakeAgent) update(id acp.SessionID, u acp.SessionUpdate) {
	if c := f.client.Load(); c != nil {
		_ = c.SessionUpdate(context.Background(), &acp.SessionNotification{SessionID: id, Update: u})
	}
}

func (f *fakeAgent) say(id acp.SessionID, text string) {
	f.update(id, &acp.AgentMessageChunk{Content: acp.TextBlock(text)})
}

// code is an error's JSON-RPC code, or 0.
func code(err error) int {
	var ae *acp.Error
	if errors.As(err, &ae) {
		return ae.Code
	}
	if err != nil {
		return -1
	}
	return 0
}

func (f *fakeAgent) Prompt(ctx context.Context, req *acp.PromptRequest) (*acp.PromptResponse, error) {
	var text string
	for _, b := range req.Prompt {
		if t, ok := b.(*acp.TextContent); ok {
			text += t.Text
		}
	}
	id := req.SessionID
	cancelled := make(chan struct{})
	f.mu.Lock()
	f.cancels[id] = cancelled
	f.mu.Unlock()
	rpc.Detach(ctx)
	cl := f.client.Load()
	f.mu.Lock()
	queued := f.queued[id]
	if len(queued) > 0 {
		f.queued[id] = queued[1:]
	}
	f.mu.Unlock()
	if len(queued) > 0 {
		if strings.Contains(text, "does not match the required JSON Schema") {
			f.update(id, &acp.UsageUpdate{Used: 1400, Size: 100000})
			f.say(id, queued[0])
		} else {
			f.say(id, "the correction did not say what was wrong")
		}
		return &acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
	}
	// The first line of the task is the command; the provider may frame
	// it and append more.
	whole := text
	if _, task, ok := strings.Cut(text, "# Task\n\n"); ok {
		text = task
	}
	first, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	verb, arg, _ := strings.Cut(first, " ")
	end := &acp.PromptResponse{StopReason: acp.StopReasonEndTurn}
	hang := func() (*acp.PromptResponse, error) {
		select {
		case <-cancelled:
			return &acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
		case <-ctx.Done():
			return &acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
		}
	}
	switch verb {
	case "echo":
		f.say(id, "echo: "+arg)
	case "pid":
		f.say(id, "pid="+strconv.Itoa(os.Getpid()))
		return hang()
	case "stderr":
		fmt.Fprintln(os.Stderr, "something went wrong: "+arg)
		f.say(id, "pid="+strconv.Itoa(os.Getpid()))
		<-ctx.Done()
		return nil, ctx.Err()
	case "exit":
		fmt.Fprintln(os.Stderr, "dying now")
		f.say(id, "partial answer")
		n, _ := strconv.Atoi(arg)
		// Let the chunk reach the client first.
		time.Sleep(10 * time.Millisecond)
		os.Exit(n)
	case "garbage":
		f.say(id, "partial answer")
		os.Stdout.WriteString("panic: this is not JSON\n")
		<-ctx.Done()
		return nil, ctx.Err()
	case "hang":
		return hang()
	case "hangforever":
		<-ctx.Done()
		return nil, ctx.Err()
	case "count":
		f.say(id, fmt.Sprintf("conns=%d sessions=%d", f.shared.conns.Load(), f.shared.sessions.Load()))
	case "probe":
		f.say(id, f.probe(ctx, cl, id))
	case "permission":
		resp, err := cl.RequestPermission(ctx, &acp.RequestPermissionRequest{
			SessionID: id,
			ToolCall:  acp.ToolCallUpdate{ToolCallID: "tc_perm", Title: "Delete everything", Kind: acp.ToolKindDelete},
			Options: []acp.PermissionOption{
				{OptionID: "yes", Name: "Yes", Kind: acp.PermissionAllowOnce},
				{OptionID: "no", Name: "No", Kind: acp.PermissionRejectOnce},
			},
		})
		switch {
		case err != nil:
			f.say(id, fmt.Sprintf("error %d", code(err)))
		default:
			switch o := resp.Outcome.(type) {
			case *acp.SelectedPermissionOutcome:
				f.say(id, "selected "+o.OptionID)
			default:
				f.say(id, "cancelled")
			}
		}
	case "write":
		path, content, _ := strings.Cut(arg, " ")
		_, err := cl.WriteTextFile(ctx, &acp.WriteTextFileRequest{SessionID: id, Path: path, Content: content})
		if err != nil {
			f.say(id, fmt.Sprintf("error %d", code(err)))
		} else {
			f.say(id, "ok")
		}
	case "read":
		resp, err := cl.ReadTextFile(ctx, &acp.ReadTextFileRequest{SessionID: id, Path: arg})
		if err != nil {
			f.say(id, fmt.Sprintf("error %d", code(err)))
		} else {
			f.say(id, "content: "+resp.Content)
		}
	case "term":
		f.say(id, f.terminal(ctx, cl, id, strings.Fields(arg)))
	case "relay":
		f.relay(ctx, cl, id)
	case "session":
		f.mu.Lock()
		req := f.news[id]
		f.mu.Unlock()
		wd, _ := os.Getwd()
		var servers []string
		for _, m := range req.McpServers {
			servers = append(servers, m.ServerName())
		}
		b, _ := json.Marshal(map[string]any{"cwd": req.Cwd, "dirs": req.AdditionalDirectories, "mcp": servers, "meta": req.Meta, "wd": wd})
		f.say(id, string(b))
	case "caps":
		b, _ := json.Marshal(f.caps.Load())
		f.say(id, string(b))
	case "permwrite":
		path, content, _ := strings.Cut(arg, " ")
		resp, err := cl.RequestPermission(ctx, &acp.RequestPermissionRequest{
			SessionID: id,
			ToolCall:  acp.ToolCallUpdate{ToolCallID: "tc_w", Title: "Write " + path, Kind: acp.ToolKindEdit, Locations: []acp.ToolCallLocation{{Path: path}}},
			Options:   []acp.PermissionOption{{OptionID: "allow", Name: "Allow", Kind: acp.PermissionAllowOnce}, {OptionID: "reject", Name: "Reject", Kind: acp.PermissionRejectOnce}},
		})
		if err != nil {
			f.say(id, fmt.Sprintf("error %d", code(err)))
			break
		}
		if o, ok := resp.Outcome.(*acp.SelectedPermissionOutcome); !ok || o.OptionID != "allow" {
			f.say(id, "not allowed")
			break
		}
		if _, err := cl.WriteTextFile(ctx, &acp.WriteTextFileRequest{SessionID: id, Path: path, Content: content}); err != nil {
			f.say(id, fmt.Sprintf("write error %d", code(err)))
		} else {
			f.say(id, "written")
		}
	case "touch", "dial":
		f.say(id, sandboxProbe(verb, arg))
	case "env":
		var out []string
		for _, name := range strings.Fields(arg) {
			if v, ok := os.LookupEnv(name); ok {
				out = append(out, name+"="+v)
			} else {
				out = append(out, name+" unset")
			}
		}
		f.say(id, strings.Join(out, " "))
	case "stop":
		reason, said, _ := strings.Cut(arg, " ")
		if said != "" {
			f.say(id, said)
		}
		return &acp.PromptResponse{StopReason: acp.StopReason(reason)}, nil
	case "think":
		f.update(id, &acp.AgentThoughtChunk{Content: acp.TextBlock("thinking it over")})
		f.say(id, arg)
	case "deaf":
		f.say(id, "ready")
		<-ctx.Done()
		return nil, ctx.Err()
	case "fail":
		return nil, acp.ErrInternal.WithData(json.RawMessage(arg))
	case "crashoncancel":
		f.say(id, "ready")
		<-cancelled
		os.Exit(1)
	case "prompt":
		f.say(id, whole)
	case "answers":
		parts := strings.Split(arg, " || ")
		f.mu.Lock()
		f.queued[id] = parts[1:]
		f.mu.Unlock()
		f.update(id, &acp.UsageUpdate{Used: 1000, Size: 100000})
		f.say(id, parts[0])
	case "used":
		for _, w := range strings.Fields(arg) {
			n, _ := strconv.ParseUint(w, 10, 64)
			f.update(id, &acp.UsageUpdate{Used: n, Size: 100000})
		}
		f.say(id, "ok")
	case "spend":
		ns, ks, _ := strings.Cut(arg, " ")
		n, _ := strconv.ParseUint(ns, 10, 64)
		k, _ := strconv.Atoi(ks)
		cancel := func() (*acp.PromptResponse, error) {
			f.say(id, "cancelled\n")
			return &acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
		}
		for i := range k {
			f.say(id, fmt.Sprintf("call %d\n", i+1))
			f.update(id, &acp.UsageUpdate{Used: n, Size: 100000, Meta: acp.Meta{"dshd.dev/usage": acp.Usage{TotalTokens: n, InputTokens: n - n/5, OutputTokens: n / 5}}})
			select {
			case <-cancelled:
				return cancel()
			case <-ctx.Done():
				return nil, ctx.Err()
			default:
			}
		}
		// Done spending, the turn does not end by itself: a run that
		// ends was stopped by its client.
		select {
		case <-cancelled:
			return cancel()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	case "terms":
		// terms N CMD...: N terminals running CMD at once, never released;
		// says how many started and the first refusal.
		var n int
		words := strings.Fields(arg)
		fmt.Sscan(words[0], &n)
		started, refusal := 0, ""
		for range n {
			_, err := cl.CreateTerminal(ctx, &acp.CreateTerminalRequest{SessionID: id, Command: words[1], Args: words[2:]})
			if err != nil {
				var ae *acp.Error
				if errors.As(err, &ae) {
					refusal = fmt.Sprintf("%d %s", ae.Code, ae.Data)
				}
				break
			}
			started++
		}
		f.say(id, fmt.Sprintf("started=%d refusal=%s", started, refusal))
	case "asks":
		// asks N: N fs/read_text_file requests at once for a session id
		// never announced, each waited for; says how they ended.
		var n int
		fmt.Sscan(arg, &n)
		var wg sync.WaitGroup
		var mu sync.Mutex
		codes := map[int]int{}
		for i := range n {
			wg.Go(func() {
				_, err := cl.ReadTextFile(ctx, &acp.ReadTextFileRequest{SessionID: acp.SessionID(fmt.Sprintf("ghost-%d", i)), Path: "/etc/hostname"})
				mu.Lock()
				codes[code(err)]++
				mu.Unlock()
			})
		}
		wg.Wait()
		f.say(id, fmt.Sprint(codes))
	case "ghosts":
		// ghosts N SIZE: N updates of SIZE bytes, each for a session id
		// never announced, then the answer.
		var n, size int
		fmt.Sscan(arg, &n, &size)
		text := strings.Repeat("g", size)
		for i := range n {
			f.update(acp.SessionID(fmt.Sprintf("ghost-%d", i)), &acp.AgentMessageChunk{Content: acp.TextBlock(text)})
		}
		f.say(id, "done")
	case "bigline":
		// bigline SIZE: one chunk of SIZE bytes, then "done".
		var size int
		fmt.Sscan(arg, &size)
		f.say(id, strings.Repeat("L", size))
		f.say(id, "done")
	case "babble":
		// babble N SIZE: one message of N chunks of SIZE bytes.
		var n, size int
		fmt.Sscan(arg, &n, &size)
		text := strings.Repeat("b", size)
		for range n {
			f.update(id, &acp.AgentMessageChunk{Content: acp.TextBlock(text), MessageID: "m_babble"})
		}
	case "chunks":
		for i, part := range strings.Split(arg, "|") {
			if i > 0 {
				f.update(id, &acp.ToolCall{ToolCallID: acp.ToolCallID(fmt.Sprintf("t%d", i)), Title: fmt.Sprintf("step %d", i), Status: acp.ToolCallStatusCompleted})
			}
			f.say(id, part)
		}
	default:
		f.say(id, "unknown verb "+verb)
	}
	return end, nil
}

// probe calls the client in ways it must refuse and reports the codes.
func (f *fakeAgent) probe(ctx context.Context, cl *rpc.AgentSideConn, id acp.SessionID) string {
	var out []string
	add := func(name string, err error) { out = append(out, fmt.Sprintf("%s=%d", name, code(err))) }
	_, err := cl.ReadTextFile(ctx, &acp.ReadTextFileRequest{SessionID: id, Path: "/nonexistent-dir-xyz/missing.txt"})
	add("read-outside", err)
	_, err = cl.ReadTextFile(ctx, &acp.ReadTextFileRequest{SessionID: id, Path: os.Getenv("PROBE_MISSING")})
	add("read-missing", err)
	_, err = cl.CreateTerminal(ctx, &acp.CreateTerminalRequest{SessionID: id, Command: "true"})
	add("terminal", err)
	_, err = cl.TerminalOutput(ctx, &acp.TerminalOutputRequest{SessionID: id, TerminalID: "nope"})
	add("terminal-output", err)
	_, err = cl.CreateElicitation(ctx, &acp.CreateElicitationRequest{Mode: acp.ElicitationModeURL, Message: "log in", SessionID: id, ElicitationID: "e1", URL: "https://example.com"})
	add("elicitation", err)
	_, err = cl.Call(ctx, "foo/bar", map[string]any{"sessionId": id})
	add("unknown", err)
	_, err = cl.Call(ctx, "_fake/ext", map[string]any{})
	add("extension", err)
	_, err = cl.ReadTextFile(ctx, &acp.ReadTextFileRequest{SessionID: "no-such-session", Path: "/x"})
	add("unknown-session", err)
	return strings.Join(out, " ")
}

func (f *fakeAgent) terminal(ctx context.Context, cl *rpc.AgentSideConn, id acp.SessionID, words []string) string {
	if len(words) == 0 {
		return "no command"
	}
	created, err := cl.CreateTerminal(ctx, &acp.CreateTerminalRequest{SessionID: id, Command: words[0], Args: words[1:]})
	if err != nil {
		return fmt.Sprintf("error %d", code(err))
	}
	treq := &acp.TerminalRequest{SessionID: id, TerminalID: created.TerminalID}
	st, err := cl.WaitForTerminalExit(ctx, treq)
	if err != nil {
		return fmt.Sprintf("wait error %d", code(err))
	}
	out, err := cl.TerminalOutput(ctx, treq)
	if err != nil {
		return fmt.Sprintf("output error %d", code(err))
	}
	_, _ = cl.ReleaseTerminal(ctx, treq)
	exit := "signal"
	if st.ExitCode != nil {
		exit = strconv.Itoa(int(*st.ExitCode))
	}
	said := fmt.Sprintf("exit=%s output=%q", exit, out.Output)
	if out.Truncated {
		said += " truncated"
	}
	return said
}

// relay plays an agent exposing a child of its own, g, to a client that
// opted in: traffic naming g before it is announced (which the client must
// hold), the announcement, g's own stream, a message between the two, a
// tool call linking g, and a permission question on g.
func (f *fakeAgent) relay(ctx context.Context, cl *rpc.AgentSideConn, id acp.SessionID) {
	g := id + "/g1"
	gCancelled := make(chan struct{})
	f.mu.Lock()
	f.cancels[g] = gCancelled
	f.mu.Unlock()
	f.update(id, &acp.SessionMessage{MessageID: "m_out", SenderSessionID: acp.Set(id), RecipientSessionID: acp.Set(g),
		Content: acp.Set([]acp.ContentBlock{acp.TextBlock("task for g")})})
	f.update(id, &acp.SubagentUpdate{SessionID: g, Title: acp.Set("helper"), Description: acp.Set("does things"),
		Capabilities: acp.Set(acp.SubagentSessionCapabilities{Cancel: &acp.EmptyCapability{}})})
	f.update(id, &acp.SubagentUpdate{SessionID: g, State: acp.Set[acp.StateUpdate](&acp.RunningState{})})
	f.update(g, &acp.AgentMessageChunk{Content: acp.TextBlock("grandchild speaking"), MessageID: "gm1"})
	f.update(id, &acp.ToolCall{ToolCallID: "tc_link", Title: "Delegate", Status: acp.ToolCallStatusCompleted,
		Content: []acp.ToolCallContent{acp.ToolText("see g"), &acp.SessionReference{SessionID: g}}})
	resp, err := cl.RequestPermission(ctx, &acp.RequestPermissionRequest{
		SessionID: g,
		ToolCall:  acp.ToolCallUpdate{ToolCallID: "tc_g", Title: "Edit a file", Kind: acp.ToolKindEdit},
		Options:   []acp.PermissionOption{{OptionID: "ok", Name: "OK", Kind: acp.PermissionAllowOnce}, {OptionID: "nope", Name: "No", Kind: acp.PermissionRejectOnce}},
	})
	answer := "error"
	if err == nil {
		if o, ok := resp.Outcome.(*acp.SelectedPermissionOutcome); ok {
			answer = o.OptionID
		} else {
			answer = "cancelled"
		}
	}
	// A client that can cancel g has done so by now (the test cancels it
	// while the question is asked); the notification may still be queued.
	stop := acp.StopReasonEndTurn
	if answer == "ok" {
		select {
		case <-gCancelled:
			stop = acp.StopReasonCancelled
		case <-time.After(5 * time.Second):
		}
	}
	f.update(id, &acp.SubagentUpdate{SessionID: g, State: acp.Set[acp.StateUpdate](&acp.IdleState{StopReason: stop})})
	f.say(id, "grandchild permission: "+answer+", grandchild "+string(stop))
}

// fakeParent starts an acp child and waits to be killed: the child must
// not outlive it.
func fakeParent() int {
	p, err := acpprovider.New(nil)
	if err != nil {
		return 1
	}
	dir, err := os.MkdirTemp("", "acpprovider-parent-")
	if err != nil {
		return 1
	}
	pids := make(chan string, 1)
	_, err = p.Start(context.Background(), subagents.StartRequest{
		Prompt: "pid",
		Parent: &subagents.Scope{SessionID: "s", Cwd: dir},
		// A child that ignores stdin EOF: only the death signal ends it.
		Options: map[string]string{"command": os.Args[0], "env": fakeEnv + "=" + modeStubborn + " " + fakeNoHelperEnv + "=1"},
		Progress: func(pr subagents.Progress) {
			if _, pid, ok := strings.Cut(pr.Text, "pid="); ok {
				select {
				case pids <- pid:
				default:
				}
			}
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("child " + <-pids)
	for {
		time.Sleep(time.Hour)
	}
}
