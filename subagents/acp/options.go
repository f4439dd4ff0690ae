// This file defines the provider's options, the named agents a binding can
// refer to, and the Provider itself.

package acpprovider

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dshd/dshd/acp/rpc"
	"github.com/dshd/dshd/internal/settingnames"
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/tools/sandbox"
	"github.com/dshd/dshd/tools/workspace"
)

// Name is the provider's name.
const Name = "acp"

// Defaults of [Options].
const (
	DefaultStartTimeout = 30 * time.Second
	// DefaultEOFGrace is wider than DefaultTermGrace: an agent's own
	// teardown on stdin EOF may wait out a helper's SIGTERM grace (a
	// child dshd gives its commands two seconds) and then flush.
	DefaultEOFGrace  = 6 * time.Second
	DefaultTermGrace = 3 * time.Second
	// DefaultCancelGrace stays within the seed's bound of 4 s for a
	// cancelled run to settle when its agent ignores session/cancel.
	DefaultCancelGrace = 3 * time.Second
	DefaultHoldUnknown = 2 * time.Second
	// DefaultMaxOutputBytes is the default of Options.MaxOutputBytes:
	// the task output a background task keeps by default, as much as a
	// child's answer is worth to the model that reads it.
	DefaultMaxOutputBytes = 256 << 10
	// DefaultMaxTerminals is the default of Options.MaxTerminals: the
	// background tasks a session runs at once by default.
	DefaultMaxTerminals = 16
	// DefaultMaxTerminalOutput is the default of
	// Options.MaxTerminalOutput.
	DefaultMaxTerminalOutput = 1 << 20
	// DefaultMaxRequests is the default of Options.MaxRequests: far more
	// than an agent that waits for its answers has open (a permission
	// question or a terminal's exit per session it runs).
	DefaultMaxRequests = 256
	// DefaultMaxHeld is the default of Options.MaxHeld: an agent
	// announces a session before (or just after) its first updates, so a
	// few per session it starts are enough.
	DefaultMaxHeld = 1024
)

// Options configure the provider. The zero value (or nil) is usable: it
// runs this program's own executable as `dshd serve`.
type Options struct {
	// Self is the program a binding runs when it names no command, address
	// or agent: the daemon's own executable. Empty means os.Executable().
	Self string
	// DefaultArgs are Self's arguments; nil means ["serve"]. The daemon
	// passes "serve" followed by the settings a child dshd should share
	// with its parent (model, backend, model URL, API key variable, state
	// dir, thinking, max tokens, context window, and "--mode ask" so the
	// child puts every action to its parent's permission gate).
	DefaultArgs []string
	// DefaultEnv are extra NAME=value entries for Self's environment. The
	// daemon's own environment is inherited except what looks like a
	// credential ([secret.Name]), so the daemon puts its model's API
	// key here.
	DefaultEnv []string
	// Agents are the named agents a binding can select with agent=NAME
	// (the config file's "agents").
	Agents map[string]AgentConfig
	// Sandbox is the daemon's command sandbox, the base of every child
	// process's sandbox: its helper, namespaces, caches, additional
	// writable roots and fallback apply, and its mode is a child dshd's
	// default (with its state dir writable). nil: a child dshd runs
	// unconfined unless its binding asks, and a binding that asks gets
	// the defaults of [sandbox.Config]. A child's reads are never
	// confined, and its network is the binding's (default on).
	Sandbox *sandbox.Config
	// StateDirOf returns the state dir of a child dshd started with args
	// in the environment lookupEnv reads and in the working directory dir
	// (against which the child resolves a relative config file or state
	// dir), by the rule the child's own settings follow (--state-dir,
	// then its environment, its config file, the default): writable in
	// its sandbox. The daemon passes the rule of its settings, which this
	// package cannot see. It is asked when the child starts, once its
	// working directory is known. "" or an error (the child will stop on
	// it and say so) makes none writable, and so does nil: a child dshd's
	// state dir is then its binding's writable key's to name.
	StateDirOf func(args []string, lookupEnv func(string) (string, bool), dir string) (string, error)

	// The durations below are zero for their default; a negative one is
	// refused by [New].

	// StartTimeout bounds starting a child: process start, initialize,
	// authenticate and session/new (default [DefaultStartTimeout]); an
	// agent or binding may set its own.
	StartTimeout time.Duration
	// EOFGrace is how long a child process gets to exit after its stdin
	// closes before its process group gets SIGTERM (default
	// [DefaultEOFGrace]); TermGrace is how long it then gets before the
	// group is killed (default [DefaultTermGrace]).
	EOFGrace, TermGrace time.Duration
	// CancelGrace is how long a cancelled child has to answer its prompt
	// before the run ends aborted without its answer (default
	// [DefaultCancelGrace]).
	CancelGrace time.Duration
	// LookupHost resolves the host name of a remote address into the
	// endpoints of a fleet (a Kubernetes headless Service's name resolves
	// to its pods); nil is the system resolver.
	LookupHost func(ctx context.Context, host string) ([]string, error)
	// HoldUnknown is how long a message naming a session id the provider
	// does not know yet is held before it is dropped (default
	// [DefaultHoldUnknown]).
	HoldUnknown time.Duration
	// Limits bound each connection to an agent (rpc.Limits; zero fields
	// take its defaults): the daemon passes its own, so that a child
	// costs no more than a client may. The idle timeout does not apply (a
	// child may think for long), nor do the authentication limits.
	Limits rpc.Limits
	// MaxRequests caps the requests of one connection's agent served at
	// once (default [DefaultMaxRequests]); beyond it the connection's
	// next message waits for one to be answered.
	MaxRequests int
	// MaxTerminals caps the terminals one child runs at once on the
	// parent's runner (default [DefaultMaxTerminals]); one more is
	// refused until one is released.
	MaxTerminals int
	// MaxTerminalOutput caps the output each of those terminals keeps
	// (its tail), which is also the most a child's outputByteLimit may
	// ask (default [DefaultMaxTerminalOutput]). Beyond it the oldest
	// output is dropped, the child reads "truncated", and the first cut
	// is logged once per child.
	MaxTerminalOutput int
	// MaxReadBytes is the most one read of the parent's file system may
	// hold (the daemon's read limit; default
	// workspace.DefaultMaxReadBytes). Each of an agent's
	// fs/read_text_file reserves it from the connection's read budget,
	// the larger of it and Limits.MaxQueuedOutput, until the read is
	// done, and then holds what it read until its answer is queued
	// (readbudget.go).
	MaxReadBytes int
	// MaxOutputBytes caps the child's answer the parent keeps: its last
	// message, which becomes the run's output. Beyond it the rest of the
	// message is counted, not kept, and the output says so (default
	// [DefaultMaxOutputBytes]).
	MaxOutputBytes int
	// MaxHeld caps the updates one connection holds for session ids its
	// agent has not announced yet, all ids together (default
	// [DefaultMaxHeld]); beyond it they are dropped, logged once. Their
	// bytes are bounded by Limits.MaxQueuedInput.
	MaxHeld int
	// ProgressInterval is the least time between two progress reports in
	// the parent's tool call when the editor does not see the child
	// (default one second).
	ProgressInterval time.Duration
	// Settings name the limits above where a hit is logged or told to the
	// agent, and the settings a child's message points at (the daemon's
	// flags). The limits of Limits are named by its own Settings, and the
	// sandbox's settings by Sandbox's.
	Settings Settings

	// ClientName and Version identify the parent in initialize (default
	// "dshd", "dev").
	ClientName, Version string
	// Logger receives the provider's logs and, at debug level, the child
	// processes' stderr lines; nil discards them.
	Logger *slog.Logger

	// observeLoad, when set, sees each change of what a connection's
	// requests hold (export_test.go: a test's look inside the parent).
	observeLoad func(load)
}

// Settings name the limits of [Options] where a hit is logged or told, one
// field for each limit of the same name, and StateDirOf the settings of a
// child dshd that choose its state dir (which its sandbox makes
// writable); an empty field is that name.
type Settings struct {
	MaxRequests, MaxTerminals, MaxTerminalOutput, MaxReadBytes, MaxOutputBytes, MaxHeld, StateDirOf string
}

// AgentConfig is a named ACP agent (the config file's "agents" entry).
type AgentConfig struct {
	// Command and Args start the agent on stdio. An empty Command with an
	// empty Address runs Self (with Args, or DefaultArgs when Args is nil).
	Command string
	Args    []string
	// Address reaches a running agent instead: "unix:PATH" or
	// "tcp:HOST:PORT".
	Address string
	// Token authenticates to a socket daemon that asks for one.
	Token string
	// Env sets and Unset removes environment variables of the command.
	// The command inherits the daemon's environment except the variables
	// whose names look like credentials ([secret.Name]); PassEnv
	// names those it gets anyway (Env may also set them).
	Env     map[string]string
	PassEnv []string
	Unset   []string
	// Cwd is "session" (the default: the parent session's cwd) or an
	// absolute path, used as the child session's cwd and the process's
	// working directory.
	Cwd string
	// Timeout bounds one run (0: none); StartTimeout the start (0: the
	// provider's).
	Timeout      time.Duration
	StartTimeout time.Duration
	// ForwardMCP passes the parent session's MCP servers to the child.
	ForwardMCP bool
	// Sandbox, Writable and NoNetwork confine a stdio agent (the binding
	// keys sandbox, writable and network=false; see [KeySandbox]).
	Sandbox   string
	Writable  []string
	NoNetwork bool
}

// Provider is the acp provider. It is safe for concurrent use; Close it
// when the daemon stops to close pooled socket connections.
type Provider struct {
	o   Options
	log *slog.Logger
	seq atomic.Uint64

	pool  pool
	fleet fleet

	boxMu sync.Mutex
	boxes map[string]*sandbox.Sandbox // by confinement; guarded by boxMu

	closeOnce sync.Once
}

var _ subagents.Provider = (*Provider)(nil)

// New returns the acp provider. opts may be nil; it is copied. A negative
// duration or limit is an error naming the setting (the first such).
func New(opts *Options) (*Provider, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	o.DefaultArgs = slices.Clone(o.DefaultArgs)
	o.DefaultEnv = slices.Clone(o.DefaultEnv)
	o.Agents = maps.Clone(o.Agents)
	if o.Sandbox != nil {
		sb := *o.Sandbox
		sb.WritableRoots = slices.Clone(sb.WritableRoots)
		o.Sandbox = &sb
	}
	settingnames.Fill(&o.Settings)
	settingnames.Fill(&o.Limits.Settings)
	if err := cmp.Or(
		defaulted("StartTimeout", "duration", &o.StartTimeout, DefaultStartTimeout),
		defaulted("EOFGrace", "duration", &o.EOFGrace, DefaultEOFGrace),
		defaulted("TermGrace", "duration", &o.TermGrace, DefaultTermGrace),
		defaulted("CancelGrace", "duration", &o.CancelGrace, DefaultCancelGrace),
		defaulted("HoldUnknown", "duration", &o.HoldUnknown, DefaultHoldUnknown),
		defaulted("ProgressInterval", "duration", &o.ProgressInterval, time.Second),
		defaulted("MaxRequests", "number", &o.MaxRequests, DefaultMaxRequests),
		defaulted("MaxTerminals", "number", &o.MaxTerminals, DefaultMaxTerminals),
		defaulted("MaxTerminalOutput", "size", &o.MaxTerminalOutput, DefaultMaxTerminalOutput),
		defaulted("MaxReadBytes", "size", &o.MaxReadBytes, workspace.DefaultMaxReadBytes),
		defaulted("MaxOutputBytes", "size", &o.MaxOutputBytes, DefaultMaxOutputBytes),
		defaulted("MaxHeld", "number", &o.MaxHeld, DefaultMaxHeld),
	); err != nil {
		return nil, err
	}
	if o.ClientName == "" {
		o.ClientName = "dshd"
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	log := cmp.Or(o.Logger, slog.New(slog.DiscardHandler))
	p := &Provider{o: o, log: log.With("provider", Name)}
	p.fleet.lookup = o.LookupHost
	p.pool.p = p
	return p, nil
}

// defaulted sets the setting *v to def when it is 0, and refuses a
// negative one, naming the setting and what it takes (kind: a duration, a
// number, a size).
func defaulted[T time.Duration | int](name, kind string, v *T, def T) error {
	switch {
	case *v < 0:
		return fmt.Errorf("acp provider: %s is %v; want a positive %s, or 0 for the default (%v)", name, *v, kind, def)
	case *v == 0:
		*v = def
	}
	return nil
}

// Name returns "acp".
func (p *Provider) Name() string { return Name }

// Capabilities declares what works across a process boundary: the depth
// limit (the child enforces it from session/new's _meta) and output
// schemas (the final text is validated here). A tool filter cannot be
// enforced inside another agent, so it is not offered.
func (p *Provider) Capabilities() subagents.Capabilities {
	return subagents.Capabilities{OutputSchema: true, DepthLimit: true}
}

// InheritsParentContext is false: the child sees only its task.
func (p *Provider) InheritsParentContext() bool { return false }

// Close closes the pooled socket connections. Runs still using them end
// with an error; stdio children belong to their runs and end with them.
func (p *Provider) Close() error {
	p.closeOnce.Do(func() {
		p.pool.close()
		p.fleet.closeClients()
	})
	return nil
}
