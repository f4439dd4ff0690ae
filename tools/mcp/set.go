// This file implements Connect and the Set of a session's MCP servers.

package mcp

import (
	"context"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/dshd/dshd/internal/settingnames"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/internal/choice"
	"github.com/dshd/dshd/tools/sandbox"
)

// Defaults of [Options].
const (
	DefaultStartTimeout = 30 * time.Second
	DefaultCallTimeout  = 10 * time.Minute
	DefaultKillGrace    = 2 * time.Second
	// DefaultMaxOutput is the default cap, in bytes, of the text a tool call
	// returns to the model.
	DefaultMaxOutput = 100_000
	// DefaultMaxMessageBytes is the default cap of one message from a
	// server: the SDK's own default line limit.
	DefaultMaxMessageBytes = 16 << 20
	// DefaultMaxTools is the default number of tools one server may
	// give the model (OpenAI's API takes 128 in one request).
	DefaultMaxTools = 128
	// DefaultMaxDescriptionBytes is the default length a tool's
	// description is cut to.
	DefaultMaxDescriptionBytes = 8192
	// DefaultMaxSchemaBytes is the default size, as JSON, of the largest
	// input schema a tool may have.
	DefaultMaxSchemaBytes = 65536
	// DefaultMaxSchemaDepth is the default deepest nesting of objects
	// and arrays in a tool's input schema.
	DefaultMaxSchemaDepth = 32
	// DefaultProgressInterval is the default shortest time between two
	// progress updates of one call that are passed on.
	DefaultProgressInterval = 250 * time.Millisecond
)

// Options configures [Connect]. The zero value works; fields are copied.
type Options struct {
	// Cwd is the working directory of stdio servers: the session's cwd.
	// Empty means ours.
	Cwd string
	// Roots are the session's root directories (absolute), offered to
	// servers as MCP roots. Empty advertises no roots capability.
	Roots []string
	// StartTimeout bounds, per server, starting it, the MCP handshake and
	// the first tools/list; 0 means DefaultStartTimeout. It also bounds
	// each re-list after a tools/list_changed.
	StartTimeout time.Duration
	// CallTimeout bounds one tools/call: a server that has not answered
	// by then gets notifications/cancelled, and the model is told the
	// call ran out of time, naming the setting. 0 means
	// DefaultCallTimeout; negative, never.
	CallTimeout time.Duration
	// KillGrace is how long Close waits after closing a stdio server's
	// stdin before SIGTERM, and after SIGTERM before SIGKILL; 0 means
	// DefaultKillGrace.
	KillGrace time.Duration
	// InheritEnv names the variables of our environment a stdio server
	// inherits; nil means [DefaultInheritEnv]. An empty non-nil slice
	// inherits nothing.
	InheritEnv []string
	// MaxOutput caps the text of one call's result given to the model; 0
	// means DefaultMaxOutput.
	MaxOutput int
	// MaxMessageBytes caps one message a server sends (a stdio line, an
	// HTTP response body); 0 means DefaultMaxMessageBytes. A stdio
	// server's answer over it fails its call with an error that names the
	// limit; the server stays connected.
	MaxMessageBytes int
	// MaxTools caps the tools of one server; the first ones, in the
	// server's order, are used. 0 means DefaultMaxTools.
	MaxTools int
	// MaxDescriptionBytes is where a tool's description is cut; 0 means
	// DefaultMaxDescriptionBytes.
	MaxDescriptionBytes int
	// MaxSchemaBytes caps a tool's input schema as JSON; a tool whose
	// schema is larger is left out with a warning. 0 means
	// DefaultMaxSchemaBytes.
	MaxSchemaBytes int
	// MaxSchemaDepth caps how deeply a tool's input schema nests objects
	// and arrays; a deeper one is left out with a warning. 0 means
	// DefaultMaxSchemaDepth.
	MaxSchemaDepth int
	// ProgressInterval is the shortest time between two progress
	// notifications of one call passed on to the call's reporter; the
	// ones in between are dropped. 0 means DefaultProgressInterval.
	ProgressInterval time.Duration
	// ProtocolVersion is the MCP version offered in the handshake; empty
	// means the SDK's latest (which falls back to the initialize handshake
	// for servers that do not know server/discover).
	ProtocolVersion string
	// ClientVersion is the version reported in clientInfo; empty means "dev".
	ClientVersion string
	// OnToolsChanged, when set, is called after a server's tools were
	// re-listed following a tools/list_changed notification, with the
	// server's model-facing tool names. It runs on the server's re-sync
	// goroutine: it must not block for long nor call [Set.Close].
	OnToolsChanged func(server string, tools []string)
	// Sandbox confines stdio servers as it confines commands, with Roots
	// (or Cwd) as the workspace, and ties them and everything they start
	// to dshd's lifetime; nil runs them directly and unconfined (they
	// still die with dshd, what they start may not).
	Sandbox *sandbox.Sandbox
	// Settings name the limits above where the model, the editor or the
	// log is told one was hit, and the setting behind Sandbox where a
	// server the sandbox refused or stopped is told of (the daemon's
	// flags).
	Settings Settings
	// Logger receives the package's logs and the servers' stderr lines
	// (at Debug); nil discards them.
	Logger *slog.Logger

	// lookupEnv reads our environment; nil is os.LookupEnv (tests swap it).
	lookupEnv func(string) (string, bool)
}

// Settings name the limits of [Options] where a hit is told, and its
// Sandbox where it confined a server, one field for each of the same
// name; an empty field is that name.
type Settings struct {
	CallTimeout, MaxOutput, MaxMessageBytes, MaxTools                     string
	MaxDescriptionBytes, MaxSchemaBytes, MaxSchemaDepth, ProgressInterval string
	Sandbox                                                               string
}

func (o *Options) withDefaults() *Options {
	var c Options
	if o != nil {
		c = *o
	}
	c.StartTimeout = choice.PositiveOr(c.StartTimeout, DefaultStartTimeout)
	if c.CallTimeout == 0 {
		c.CallTimeout = DefaultCallTimeout
	}
	c.KillGrace = choice.PositiveOr(c.KillGrace, DefaultKillGrace)
	if c.InheritEnv == nil {
		c.InheritEnv = DefaultInheritEnv
	}
	c.MaxOutput = choice.PositiveOr(c.MaxOutput, DefaultMaxOutput)
	c.MaxMessageBytes = choice.PositiveOr(c.MaxMessageBytes, DefaultMaxMessageBytes)
	c.MaxTools = choice.PositiveOr(c.MaxTools, DefaultMaxTools)
	c.MaxDescriptionBytes = choice.PositiveOr(c.MaxDescriptionBytes, DefaultMaxDescriptionBytes)
	c.MaxSchemaBytes = choice.PositiveOr(c.MaxSchemaBytes, DefaultMaxSchemaBytes)
	c.MaxSchemaDepth = choice.PositiveOr(c.MaxSchemaDepth, DefaultMaxSchemaDepth)
	c.ProgressInterval = choice.PositiveOr(c.ProgressInterval, DefaultProgressInterval)
	settingnames.Fill(&c.Settings)
	if c.ClientVersion == "" {
		c.ClientVersion = "dev"
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.lookupEnv == nil {
		c.lookupEnv = os.LookupEnv
	}
	return &c
}

// Set is the MCP servers of one session, connected, with their tools in
// the session's registry. Its methods are safe for concurrent use.
type Set struct {
	servers []*server // connected servers, in config order
	once    sync.Once
}

// ServerInfo describes a connected server.
type ServerInfo struct {
	Name      string
	Transport string
	// Tools are the model-facing names of its registered tools, sorted.
	Tools []string
	// Gone says why the server's connection ended; empty while it lives.
	Gone string
	// PID is a stdio server's process id (its process group's too), or
	// under a sandbox its helper's; 0 for http and sse.
	PID int
}

// Connect connects to every server in cfgs at once and registers their
// tools in reg (the session's registry layer; not nil). A server that cannot be
// used yields a Warning, in config order, and is left out; the Set holds
// the others. Connect returns when every server is connected or has
// failed; ctx bounds the whole call (each server also has its own start
// timeout) but not the connections' life, which ends with [Set.Close].
func Connect(ctx context.Context, cfgs []ServerConfig, reg *tools.Registry, opts *Options) (*Set, []Warning) {
	o := opts.withDefaults()
	servers := make([]*server, len(cfgs))
	results := make([]struct {
		warnings []Warning
		err      error
	}, len(cfgs))
	seen := make(map[string]bool, len(cfgs))
	var wg sync.WaitGroup
	for i, cfg := range cfgs {
		cfg.Args = append([]string(nil), cfg.Args...)
		cfg.Env = append([]EnvVar(nil), cfg.Env...)
		cfg.Headers = append([]Header(nil), cfg.Headers...)
		if seen[cfg.Name] {
			results[i].err = &Error{Kind: ErrInvalidConfig, Msg: "another server has the same name"}
			continue
		}
		seen[cfg.Name] = true
		s := newServer(cfg, o, reg)
		servers[i] = s
		wg.Go(func() {
			w, err := s.connect(ctx)
			results[i].warnings, results[i].err = w, err
			if err != nil {
				s.close()
			}
		})
	}
	wg.Wait()
	set := &Set{}
	var warnings []Warning
	for i, r := range results {
		if r.err != nil {
			w := Warning{Server: cfgs[i].Name, Err: r.err}
			o.Logger.Warn("mcp server unavailable", "mcp_server", cfgs[i].Name, "err", r.err)
			warnings = append(warnings, w)
			continue
		}
		warnings = append(warnings, r.warnings...)
		set.servers = append(set.servers, servers[i])
		o.Logger.Debug("mcp server connected", "mcp_server", cfgs[i].Name, "tools", len(servers[i].toolNames()))
	}
	return set, warnings
}

// Servers describes the connected servers, in config order.
func (s *Set) Servers() []ServerInfo {
	if s == nil {
		return nil
	}
	out := make([]ServerInfo, 0, len(s.servers))
	for _, srv := range s.servers {
		out = append(out, ServerInfo{
			Name:      srv.cfg.Name,
			Transport: srv.cfg.transport(),
			Tools:     srv.toolNames(),
			Gone:      srv.deadReason(),
			PID:       srv.pid(),
		})
	}
	return out
}

// Close closes every connection (stdio servers: stdin closed, then
// SIGTERM, then SIGKILL to the process group, each after the kill grace,
// and reaped) and unregisters every tool. Calls in flight end with an
// error result. Close is idempotent; it returns when everything the Set
// started has ended.
func (s *Set) Close() error {
	if s == nil {
		return nil
	}
	s.once.Do(func() {
		var wg sync.WaitGroup
		for _, srv := range s.servers {
			wg.Go(srv.close)
		}
		wg.Wait()
	})
	return nil
}
