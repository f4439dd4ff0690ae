// This file implements one MCP server connection: its transport, the
// handshake under the start timeout, the tool list kept in sync with the
// registry, death detection and teardown.

package mcp

// MCP roots are deprecated by the protocol's 2026-07-28 version, for at
// least twelve months of working on. Servers of the versions we speak ask
// for them to learn the workspace, so we offer them until those versions
// are gone.
//
//lint:file-ignore SA1019 roots stay while the servers we speak to ask for them

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/sandbox"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// server is one configured MCP server and its connection.
type server struct {
	cfg  ServerConfig
	opts *Options
	reg  *tools.Registry
	log  *slog.Logger
	red  *redactor

	cs     *sdk.ClientSession // nil until the handshake succeeded
	proc   *process           // stdio only
	httpTr *http.Transport    // http and sse only
	// sseCancel ends an sse server's event stream, which the SDK ties to
	// the context its Connect got.
	sseCancel context.CancelFunc

	// ctx ends when the server is closed; calls and re-syncs derive from it.
	ctx    context.Context
	cancel context.CancelFunc

	resync chan struct{} // a tools/list_changed arrived; capacity 1
	gone   chan struct{} // closed by watch when the connection ended
	wg     sync.WaitGroup

	mu sync.Mutex
	// tools maps each tool's plain model name (toolName, or hashedName
	// for a name another tool of the server sanitizes to) to its
	// registration, which holds the name it got; guarded by mu.
	tools   map[string]*registered
	dead    string // why the connection ended; guarded by mu
	closing bool   // guarded by mu
	// cutDescription is set once a tool's description was cut, so the
	// log says so once; guarded by mu.
	cutDescription bool

	// cutOutput is set once a call's output was cut, so the log says so
	// once.
	cutOutput atomic.Bool
	// timedOut is set once a call ran out of CallTimeout, so the log
	// says so once per server.
	timedOut atomic.Bool
	// thinnedProgress is set once a progress update was dropped.
	thinnedProgress atomic.Bool

	progressSeq atomic.Uint64
	progressMu  sync.Mutex
	progress    map[string]*progressSink // token → running call; guarded by progressMu

	closeOnce sync.Once
}

// registered is one tool of the server in the registry.
type registered struct {
	tool       *mcpTool
	def        []byte // the server's definition, to notice changes
	unregister func()
}

func newServer(cfg ServerConfig, opts *Options, reg *tools.Registry) *server {
	s := &server{
		cfg:      cfg,
		opts:     opts,
		reg:      reg,
		log:      opts.Logger.With("mcp_server", cfg.Name, "transport", cfg.transport()),
		red:      newRedactor(&cfg),
		resync:   make(chan struct{}, 1),
		gone:     make(chan struct{}),
		tools:    make(map[string]*registered),
		progress: make(map[string]*progressSink),
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s
}

// connect starts or dials the server, runs the handshake and registers
// its tools, all under the start timeout. On error the caller must close s.
func (s *server) connect(ctx context.Context) ([]Warning, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.StartTimeout)
	defer cancel()
	if err := s.cfg.validate(); err != nil {
		return nil, err
	}
	t, err := s.transport()
	if err != nil {
		return nil, err
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "dshd", Version: s.opts.ClientVersion}, s.clientOptions())
	if len(s.opts.Roots) > 0 {
		client.AddRoots(roots(s.opts.Roots)...)
	}
	cs, err := client.Connect(ctx, t, &sdk.ClientSessionOptions{ProtocolVersion: s.opts.ProtocolVersion})
	if err != nil {
		return nil, s.startError(ctx, "the MCP handshake", err)
	}
	s.cs = cs
	s.wg.Go(s.watch)
	defs, err := s.list(ctx)
	if err != nil {
		return nil, s.startError(ctx, "tools/list", err)
	}
	warnings := s.sync(defs)
	s.wg.Go(s.resyncLoop)
	return warnings, nil
}

// transport returns the SDK transport of s's config, starting a stdio
// server's process.
func (s *server) transport() (sdk.Transport, error) {
	switch s.cfg.transport() {
	case TransportStdio:
		env := buildEnv(s.opts.InheritEnv, s.opts.lookupEnv, s.cfg.Env)
		cmd, err := lookPath(s.cfg.Command, env)
		if err != nil {
			return nil, s.red.errorf(ErrStart, "%v", err)
		}
		cfg := s.cfg
		cfg.Command = cmd
		roots := s.opts.Roots
		if len(roots) == 0 && s.opts.Cwd != "" {
			roots = []string{s.opts.Cwd}
		}
		p, err := startProcess(&cfg, s.opts.Cwd, roots, env, s.opts.Sandbox, s.opts.Settings.Sandbox, s.opts.KillGrace, s.log, s.red)
		if errors.Is(err, sandbox.ErrRefused) {
			return nil, &Error{Kind: ErrStart, cause: err, Msg: s.red.scrub(fmt.Sprintf("not started: %v. %s", err, sandboxHint(s.opts.Settings.Sandbox)))}
		}
		if err != nil {
			return nil, s.red.errorf(ErrStart, "cannot run %s: %v", s.cfg.Command, err)
		}
		s.proc = p
		r, w := p.conn()
		// The filter enforces the message limit (and says so), so the
		// SDK's own cap is off.
		return &sdk.IOTransport{Reader: newStdoutFilter(r, s.msgLimit(), s.red), Writer: w, MaxLineLength: -1}, nil
	case TransportHTTP:
		return &sdk.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: s.httpClient(), MaxEventSize: s.maxEventSize()}, nil
	case TransportSSE:
		return &sseTransport{s: s, inner: &sdk.SSEClientTransport{Endpoint: s.cfg.URL, HTTPClient: s.httpClient(), MaxEventSize: s.maxEventSize()}}, nil
	}
	return nil, &Error{Kind: ErrUnsupportedTransport, Msg: fmt.Sprintf("unknown transport %q", s.cfg.Transport)}
}

// maxEventSize is the SDK's cap on one SSE event: the message limit, as
// the filter holds each line to it, and room for the event's other lines.
func (s *server) maxEventSize() int { return s.opts.MaxMessageBytes + 64<<10 }

// msgLimit is the limit on one message of the server.
func (s *server) msgLimit() *msgLimit {
	return &msgLimit{max: s.opts.MaxMessageBytes, setting: s.opts.Settings.MaxMessageBytes, log: s.log}
}

// sseTransport runs the SDK's SSE transport with a context that outlives
// the handshake: the SDK binds its event stream to the Connect context,
// which for us ends with the start timeout.
type sseTransport struct {
	s     *server
	inner *sdk.SSEClientTransport
}

func (t *sseTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	streamCtx, cancel := context.WithCancel(t.s.ctx)
	stop := context.AfterFunc(ctx, cancel) // a start that times out still aborts the dial
	conn, err := t.inner.Connect(streamCtx)
	if !stop() || err != nil {
		cancel()
		if err == nil {
			conn.Close()
			err = ctx.Err()
		}
		return nil, err
	}
	t.s.sseCancel = cancel
	return conn, nil
}

func (s *server) clientOptions() *sdk.ClientOptions {
	o := &sdk.ClientOptions{
		Logger: s.log,
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			select {
			case s.resync <- struct{}{}:
			default: // a re-sync is already pending; it will see this change too
			}
		},
		ProgressNotificationHandler: s.onProgress,
	}
	if len(s.opts.Roots) == 0 {
		// No roots to offer: advertise nothing rather than the SDK's
		// default roots capability.
		o.Capabilities = &sdk.ClientCapabilities{}
	}
	return o
}

// roots turns absolute directories into MCP roots.
func roots(dirs []string) []*sdk.Root {
	out := make([]*sdk.Root, 0, len(dirs))
	for _, d := range dirs {
		u := url.URL{Scheme: "file", Path: filepath.ToSlash(d)}
		out = append(out, &sdk.Root{URI: u.String(), Name: filepath.Base(d)})
	}
	return out
}

// startError turns a failed handshake or first list into an *Error.
func (s *server) startError(ctx context.Context, step string, err error) *Error {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return s.red.errorf(ErrStartTimeout, "no answer to %s within %v", step, s.opts.StartTimeout)
	case ctx.Err() != nil:
		return s.red.errorf(ErrStart, "connecting was cancelled")
	case s.proc != nil:
		if s.proc.waitExit(s.opts.KillGrace) {
			return s.red.errorf(ErrExited, "exited during %s: %s", step, s.proc.describe(err))
		}
		return s.red.errorf(ErrStart, "%s failed: %v", step, err)
	}
	return s.red.errorf(ErrStart, "%s failed: %v", step, err)
}

// list returns the tools the server offers, across pages, up to one more
// than the tool limit: paging stops there, so a server that offers
// without end is not listed without end.
func (s *server) list(ctx context.Context) ([]*sdk.Tool, error) {
	var out []*sdk.Tool
	for t, err := range s.cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		out = append(out, t)
		if len(out) > s.opts.MaxTools {
			break
		}
	}
	return out, nil
}

// sync brings the registry in line with defs: new tools are registered,
// vanished ones unregistered, changed ones replaced. Names are assigned in
// the server's order, so the same list always gives the same names.
func (s *server) sync(defs []*sdk.Tool) []Warning {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return nil
	}
	var warnings []Warning
	warn := func(format string, args ...any) {
		w := Warning{Server: s.cfg.Name, Err: s.red.errorf(ErrTool, format, args...)}
		s.log.Warn("mcp tool skipped", "err", w.Err)
		warnings = append(warnings, w)
	}
	if len(defs) > s.opts.MaxTools {
		defs = defs[:s.opts.MaxTools]
		warn("it offers more than %d tools, the limit of one server (%s); only its first %d are used", s.opts.MaxTools, s.opts.Settings.MaxTools, s.opts.MaxTools)
	}
	desired := make(map[string]want, len(defs))
	var order []string
	for _, d := range defs {
		if depth := schemaDepth(d.InputSchema, s.opts.MaxSchemaDepth); depth > s.opts.MaxSchemaDepth {
			warn("tool %q: its input schema nests deeper than %d levels (%s)", d.Name, s.opts.MaxSchemaDepth, s.opts.Settings.MaxSchemaDepth)
			continue
		}
		if n := schemaSize(d.InputSchema); n > s.opts.MaxSchemaBytes {
			warn("tool %q: its input schema has %d bytes, over the limit of %d (%s)", d.Name, n, s.opts.MaxSchemaBytes, s.opts.Settings.MaxSchemaBytes)
			continue
		}
		if fault := inputSchemaFault(d.InputSchema); fault != "" {
			warn("tool %q: %s", d.Name, fault)
			continue
		}
		name := toolName(s.cfg.Name, d.Name)
		if _, taken := desired[name]; taken {
			name = hashedName(s.cfg.Name, d.Name)
		}
		if _, taken := desired[name]; taken {
			warn("tool %q: its name %s is taken by another tool of the server", d.Name, name)
			continue
		}
		b, err := json.Marshal(d)
		if err != nil {
			warn("tool %q: bad definition: %v", d.Name, err)
			continue
		}
		desired[name] = want{d, b}
		order = append(order, name)
	}
	for name, r := range s.tools {
		if w, ok := desired[name]; !ok || string(w.json) != string(r.def) {
			r.unregister()
			delete(s.tools, name)
		}
	}
	for _, name := range order {
		if _, ok := s.tools[name]; ok {
			continue
		}
		w := desired[name]
		t := newTool(s, name, w.def)
		unregister, err := s.reg.Register(t)
		if alt := hashedName(s.cfg.Name, w.def.Name); errors.Is(err, tools.ErrDuplicateTool) && alt != name && !s.nameTaken(alt, desired) {
			// Another server's tool has the name (their server names
			// sanitize alike): the hash of our raw names tells ours apart.
			t = newTool(s, alt, w.def)
			unregister, err = s.reg.Register(t)
		}
		if err != nil {
			warn("tool %q: %v", w.def.Name, err)
			continue
		}
		s.tools[name] = &registered{tool: t, def: w.json, unregister: unregister}
		if t.name != namePrefix+sanitize(s.cfg.Name)+"__"+w.def.Name {
			// The server part is the user's own name, shown as they wrote
			// it; a tool's is the server's, which the model now calls by
			// another.
			w := Warning{Server: s.cfg.Name, Err: s.red.errorf(ErrToolRenamed, "tool %q: offered to the model as %s (model APIs take names of letters, digits, _ and -, up to %d characters, and one tool a name)", w.def.Name, t.name, maxNameLen)}
			s.log.Warn("mcp tool renamed", "err", w.Err)
			warnings = append(warnings, w)
		}
	}
	return warnings
}

// nameTaken reports whether one of the server's own tools, registered or
// about to be, has the model-facing name; s.mu is held.
func (s *server) nameTaken(name string, desired map[string]want) bool {
	if _, ok := desired[name]; ok {
		return true
	}
	for _, r := range s.tools {
		if r.tool.name == name {
			return true
		}
	}
	return false
}

// want is a tool the server lists: its definition and that as JSON.
type want struct {
	def  *sdk.Tool
	json []byte
}

// schemaDepth is how deeply the objects and arrays of schema (as decoded
// from JSON) nest, counting no further than one past limit.
func schemaDepth(schema any, limit int) int {
	var children []any
	switch v := schema.(type) {
	case map[string]any:
		for _, c := range v {
			children = append(children, c)
		}
	case []any:
		children = v
	default:
		return 0
	}
	deepest := 0
	for _, c := range children {
		if deepest >= limit {
			break
		}
		deepest = max(deepest, schemaDepth(c, limit-1))
	}
	return 1 + deepest
}

// schemaSize is the length of schema as JSON.
func schemaSize(schema any) int {
	b, err := json.Marshal(schema)
	if err != nil {
		return 0 // ObjectSchema turns it into an empty object schema
	}
	return len(b)
}

// toolNames returns the registered model-facing names, sorted.
func (s *server) toolNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.tools))
	for _, r := range s.tools {
		names = append(names, r.tool.name)
	}
	slices.Sort(names)
	return names
}

// resyncLoop re-lists the tools after each tools/list_changed until s closes.
func (s *server) resyncLoop() {
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.resync:
		}
		ctx, cancel := context.WithTimeout(s.ctx, s.opts.StartTimeout)
		defs, err := s.list(ctx)
		cancel()
		if err != nil {
			if s.ctx.Err() == nil {
				s.log.Warn("mcp tools/list after a change failed", "err", s.red.scrub(err.Error()))
			}
			continue
		}
		s.sync(defs)
		if s.opts.OnToolsChanged != nil {
			s.opts.OnToolsChanged(s.cfg.Name, s.toolNames())
		}
	}
}

// watch waits for the connection to end and, unless we closed it, records
// why, so later calls fail at once with a clear message.
func (s *server) watch() {
	defer close(s.gone)
	err := s.cs.Wait()
	s.mu.Lock()
	closing := s.closing
	s.mu.Unlock()
	if closing {
		return
	}
	reason := "the connection ended"
	if err != nil {
		reason += ": " + s.red.scrub(err.Error())
	}
	if s.proc != nil && s.proc.waitExit(s.opts.KillGrace) {
		reason = "the server " + s.proc.death(3)
	}
	s.mu.Lock()
	s.dead = reason
	s.mu.Unlock()
	s.log.Warn("mcp server is gone; its tools will fail", "reason", reason)
}

// deadReason returns why the connection ended, or "" while it lives.
func (s *server) deadReason() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dead
}

// pid returns a stdio server's process id, 0 otherwise.
func (s *server) pid() int {
	if s.proc == nil || s.proc.cmd.Process == nil {
		return 0
	}
	return s.proc.cmd.Process.Pid
}

// close ends the server: in-flight calls are cancelled (the SDK tells the
// server), the tools unregistered, the session closed (for stdio, that
// closes the server's stdin), the process stopped and reaped, and every
// goroutine of the server waited for. Idempotent.
func (s *server) close() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closing = true
		for name, r := range s.tools {
			r.unregister()
			delete(s.tools, name)
		}
		s.mu.Unlock()
		// Cancelling first matters: the SDK's Close waits for every
		// outgoing call to finish.
		s.cancel()
		if s.cs != nil {
			if err := s.cs.Close(); err != nil {
				s.log.Debug("mcp session close", "err", s.red.scrub(err.Error()))
			}
		}
		if s.proc != nil {
			s.proc.stop()
		}
		if s.sseCancel != nil {
			s.sseCancel()
		}
		s.wg.Wait()
		if s.httpTr != nil {
			s.httpTr.CloseIdleConnections()
		}
	})
}
