// This file declares the settings and the table that drives them.

package config

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/dshd/dshd/agent/llm/openai"
)

// Settings are dshd's resolved settings.
type Settings struct {
	// Backend is a preset for the model server: deepseek (default),
	// openai, ollama, vllm, llamacpp, openrouter.
	Backend string `json:"backend,omitempty"`
	// Model is the model id, or "scripted" / "scripted:FILE" for the
	// built-in offline model.
	Model string `json:"model,omitempty"`
	// ModelURL is the base URL of an OpenAI-compatible server.
	ModelURL string `json:"modelUrl,omitempty"`
	// APIKeyEnv names the environment variable holding the API key; empty
	// means the server needs no key.
	APIKeyEnv string `json:"apiKeyEnv"`
	// Thinking turns the model's thinking mode on or off where the backend
	// has one ("", "on", "off").
	Thinking string `json:"thinking,omitempty"`
	// ModelTimeout is how long the model server may send nothing before a
	// call fails.
	ModelTimeout time.Duration `json:"modelTimeout,omitempty"`
	// ModelFirstTokenTimeout, ModelIdleTimeout and ModelCallTimeout bound
	// a streamed answer: its first data event after the headers, the
	// silence between two, and the whole call with its retries (0: never).
	ModelFirstTokenTimeout time.Duration `json:"modelFirstTokenTimeout,omitempty"`
	ModelIdleTimeout       time.Duration `json:"modelIdleTimeout,omitempty"`
	ModelCallTimeout       time.Duration `json:"modelCallTimeout,omitempty"`
	// MaxModelAnswerBytes bounds one model answer: its text, reasoning
	// and tool calls held at once (one event or body carrying it, twice
	// that).
	MaxModelAnswerBytes int `json:"maxModelAnswerBytes,omitempty"`

	StateDir string `json:"stateDir,omitempty"`
	// MaxOpenJournals bounds the journal files the daemon keeps open.
	MaxOpenJournals int    `json:"maxOpenJournals,omitempty"`
	LogLevel        string `json:"logLevel,omitempty"`
	LogFormat       string `json:"logFormat,omitempty"`
	Listen          string `json:"listen,omitempty"`
	// Token is not read from the table: the serve command takes it from
	// DSHD_TOKEN or TokenFile, never from the command line.
	Token     string `json:"-"`
	TokenFile string `json:"tokenFile,omitempty"`

	// Limits of every connection (acp/rpc.Limits) and of the listener; a
	// zero timeout means never.
	MaxLineBytes         int           `json:"maxLineBytes,omitempty"`
	PreauthMaxLineBytes  int           `json:"preauthMaxLineBytes,omitempty"`
	HandshakeTimeout     time.Duration `json:"handshakeTimeout,omitempty"`
	MaxQueuedInputBytes  int           `json:"maxQueuedInputBytes,omitempty"`
	MaxQueuedOutputBytes int           `json:"maxQueuedOutputBytes,omitempty"`
	WriteTimeout         time.Duration `json:"writeTimeout,omitempty"`
	IdleTimeout          time.Duration `json:"idleTimeout,omitempty"`
	MaxConnections       int           `json:"maxConnections,omitempty"`
	MaxSessionsPerConn   int           `json:"maxSessionsPerConnection,omitempty"`
	MaxUnauthenticated   int           `json:"maxUnauthenticated,omitempty"`
	MaxAuthFailures      int           `json:"maxAuthFailures,omitempty"`
	AuthPenalty          time.Duration `json:"authPenalty,omitempty"`

	// MaxAdditionalDirectories bounds a session request's
	// additionalDirectories.
	MaxAdditionalDirectories int `json:"maxAdditionalDirectories,omitempty"`

	// The http(s) listener (the remote transport): TLS files, the drain
	// grace, SSE keepalives and WebSocket pings, how long an HTTP
	// connection without streams lives, and the affinity cookie.
	TLSCert              string `json:"tlsCert,omitempty"`
	TLSKey               string `json:"tlsKey,omitempty"`
	DrainGraceSeconds    int    `json:"drainGraceSeconds,omitempty"`
	KeepaliveSeconds     int    `json:"keepaliveSeconds,omitempty"`
	DetachTimeoutSeconds int    `json:"detachTimeoutSeconds,omitempty"`
	AffinityCookie       string `json:"affinityCookie,omitempty"`
	// CloseTimeout bounds each of the last two steps of an http(s)
	// listener's shutdown: the cancelled turns' end, the connections'.
	CloseTimeout time.Duration `json:"closeTimeout,omitempty"`

	// HeaderTimeout bounds how long an http(s) listener waits for a
	// request's headers; KeepaliveTimeout how long it keeps an idle
	// keep-alive TCP connection open between two requests.
	HeaderTimeout    time.Duration `json:"headerTimeout,omitempty"`
	KeepaliveTimeout time.Duration `json:"keepaliveTimeout,omitempty"`
	// MaxHeaderBytes caps a request's head on an http(s) listener;
	// HTTP2MaxStreams the HTTP/2 streams one of its connections may
	// have open at once.
	MaxHeaderBytes  int `json:"maxHeaderBytes,omitempty"`
	HTTP2MaxStreams int `json:"http2MaxStreams,omitempty"`

	Mode            string `json:"mode,omitempty"`
	MaxTurnRequests int    `json:"maxTurnRequests,omitempty"`
	MaxTokens       int    `json:"maxTokens,omitempty"`
	// MaxTokensPerTurn bounds a prompt turn's tokens with everything its
	// subagents spend (0: unbounded).
	MaxTokensPerTurn int `json:"maxTokensPerTurn,omitempty"`
	ContextWindow    int `json:"contextWindow,omitempty"`
	MaxDepth         int `json:"maxDepth,omitempty"`

	// MaxTasks is how many background tasks a session runs at once;
	// MaxKeptTasks how many it remembers; TaskOutput the bytes of output
	// each keeps; TaskIdleRelease how long a settled subagent task keeps
	// its child for a continue.
	MaxTasks        int           `json:"maxTasks,omitempty"`
	MaxKeptTasks    int           `json:"maxKeptTasks,omitempty"`
	TaskOutput      int           `json:"taskOutputLimit,omitempty"`
	TaskIdleRelease time.Duration `json:"taskIdleRelease,omitempty"`
	// MaxChildOutput is the bytes of an acp child's answer the parent
	// keeps (the start).
	MaxChildOutput int `json:"maxChildOutputBytes,omitempty"`
	// MaxChildRequests is how many of an acp child's requests (to read a
	// file, ask permission, run a terminal) the parent serves at once.
	MaxChildRequests int `json:"maxChildRequests,omitempty"`
	// MaxReadBytes is the most one read of a local file holds (a tool's,
	// an acp child's fs/read_text_file); a larger read is refused.
	MaxReadBytes int `json:"maxReadBytes,omitempty"`
	// MaxHeldChildUpdates is how many session updates an acp child sends
	// for session ids it has not announced yet the parent holds, all ids
	// together, in case the announcement follows.
	MaxHeldChildUpdates int `json:"maxHeldChildUpdates,omitempty"`

	// MaxJournalBytes is the journal size at which a session takes no
	// new prompt (0: unbounded); MinFreeDiskBytes the space the state
	// directory's file system keeps free of us (0: not checked).
	MaxJournalBytes  int `json:"maxJournalBytes,omitempty"`
	MinFreeDiskBytes int `json:"minFreeDiskBytes,omitempty"`
	// MaxStateBytes bounds the bytes of all sessions in the state
	// directory (0: unbounded): what to set under a quota the file
	// system's free space does not show.
	MaxStateBytes int `json:"maxStateBytes,omitempty"`
	// CheckoutTimeout bounds the clone of a session on a checkout of its
	// own (session/new's _meta "dshd.dev/checkout").
	CheckoutTimeout time.Duration `json:"checkoutTimeout,omitempty"`

	// The bounds of the files a workspace holds that dshd reads itself:
	// how much of AGENTS.md the system prompt holds (the rest is cut),
	// and the largest command file, agent definition (and schema file)
	// and ignore file read (a larger one is not used).
	MaxInstructionsBytes int `json:"maxInstructionsBytes,omitempty"`
	MaxCommandFileBytes  int `json:"maxCommandFileBytes,omitempty"`
	MaxAgentFileBytes    int `json:"maxAgentFileBytes,omitempty"`
	MaxIgnoreFileBytes   int `json:"maxIgnoreFileBytes,omitempty"`
	// How many command files and agent definition files are read from a
	// workspace, and apart from it from the user's config dir (the files
	// past it, by name, are not read).
	MaxCommandFiles int `json:"maxCommandFiles,omitempty"`
	MaxAgentFiles   int `json:"maxAgentFiles,omitempty"`

	// Sandbox is how commands are confined: workspace-write, read-only,
	// off; the Sandbox* settings below refine it.
	Sandbox          string   `json:"sandbox,omitempty"`
	SandboxNetwork   bool     `json:"sandboxNetwork"`
	SandboxWritable  []string `json:"sandboxWritableRoots,omitempty"`
	SandboxReadable  []string `json:"sandboxReadableRoots,omitempty"`
	SandboxCaches    bool     `json:"sandboxCaches"`
	SandboxFallback  string   `json:"sandboxFallback,omitempty"`
	CommandEnv       string   `json:"commandEnv,omitempty"`
	CommandEnvDrop   []string `json:"commandEnvExclude,omitempty"`
	CommandEnvOnly   []string `json:"commandEnvIncludeOnly,omitempty"`
	CommandEnvSet    []string `json:"commandEnvSet,omitempty"`
	CommandEnvSecret bool     `json:"commandEnvKeepSecretNames"`
	// CommandOutputBytes is the output of one run_command the model gets
	// (the tail; also the outputByteLimit an editor's terminal is asked
	// for); CommandTimeout a call's timeout when it gives none,
	// CommandMaxTimeout the most it may give.
	CommandOutputBytes int           `json:"commandOutputBytes,omitempty"`
	CommandTimeout     time.Duration `json:"commandTimeout,omitempty"`
	CommandMaxTimeout  time.Duration `json:"commandMaxTimeout,omitempty"`

	// MCPSandbox is where stdio MCP servers run: commands (the commands'
	// sandbox, with the session's workspace) or off.
	MCPSandbox string `json:"mcpSandbox,omitempty"`
	// MCPStartTimeout bounds starting one MCP server, its handshake and
	// its first tools/list.
	MCPStartTimeout time.Duration `json:"mcpStartTimeout,omitempty"`
	// MCPCallTimeout bounds one MCP tool call (0: never).
	MCPCallTimeout time.Duration `json:"mcpCallTimeout,omitempty"`
	// MCPMaxMessageBytes caps one message an MCP server sends.
	MCPMaxMessageBytes int `json:"mcpMaxMessageBytes,omitempty"`
	// MCPMaxOutputBytes caps the text and rawOutput of one MCP tool call.
	MCPMaxOutputBytes int `json:"mcpMaxOutputBytes,omitempty"`
	// MCPProgressInterval is the shortest time between two progress
	// updates of one MCP call that are shown.
	MCPProgressInterval time.Duration `json:"mcpProgressInterval,omitempty"`
	// MCPMaxTools caps the tools of one MCP server.
	MCPMaxTools int `json:"mcpMaxTools,omitempty"`
	// MCPMaxToolDescriptionBytes is where an MCP tool's description is cut.
	MCPMaxToolDescriptionBytes int `json:"mcpMaxToolDescriptionBytes,omitempty"`
	// MCPMaxToolSchemaBytes caps an MCP tool's input schema.
	MCPMaxToolSchemaBytes int `json:"mcpMaxToolSchemaBytes,omitempty"`
	// MCPMaxToolSchemaDepth caps how deeply an MCP tool's input schema nests.
	MCPMaxToolSchemaDepth int `json:"mcpMaxToolSchemaDepth,omitempty"`

	// Subagents are tool bindings, "TOOLNAME=PROVIDER[,key=value...]".
	Subagents []string `json:"subagents,omitempty"`
	// Agents are named ACP agents the acp provider can start (file only).
	Agents map[string]Agent `json:"agents,omitempty"`

	// origins says where each value came from, for [Settings.Invalid] and
	// [Settings.IsSet]: keyed by flag name, "flag[i]" for list items and
	// "agents.NAME" for named agents.
	origins map[string]origin
}

// Agent is an ACP agent the acp provider can run as a child.
type Agent struct {
	// Command and Args start it on stdio; Address ("unix:PATH",
	// "tcp:HOST:PORT") reaches a daemon instead.
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Address string            `json:"address,omitempty"`
	Token   string            `json:"token,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	// PassEnv names variables of dshd's environment the agent gets even
	// though they look like credentials (its API key).
	PassEnv []string `json:"passEnv,omitempty"`
	Unset   []string `json:"unsetEnv,omitempty"`
	// Cwd is "session" (default: the parent session's cwd) or an absolute
	// path.
	Cwd string `json:"cwd,omitempty"`
	// TimeoutSeconds bounds one run; StartTimeoutSeconds the handshake.
	TimeoutSeconds      int  `json:"timeoutSeconds,omitempty"`
	StartTimeoutSeconds int  `json:"startTimeoutSeconds,omitempty"`
	ForwardMCP          bool `json:"forwardMcpServers,omitempty"`
	// Sandbox confines a stdio agent ("workspace-write", "read-only",
	// "off"), Writable are the absolute directories it also writes (its
	// own state), Network false keeps it off the network; as the binding
	// keys sandbox, writable and network.
	Sandbox  string   `json:"sandbox,omitempty"`
	Writable []string `json:"writable,omitempty"`
	Network  *bool    `json:"network,omitempty"`
}

// kind is the type of a setting's value.
type kind int

const (
	kString kind = iota
	kInt
	kList
	// kBool reads true/false; a bare flag means true.
	kBool
	// kDuration reads a Go duration ("90s", "2m") or a number of seconds.
	kDuration
)

// Command is a dshd command that reads settings.
type Command uint8

// The commands that read settings.
const (
	Serve Command = 1 << iota
	Prompt
	// Sessions is `dshd sessions`, which reads only where sessions live
	// and how to log.
	Sessions
)

// agentCommands are the commands that run an agent: the ones a row
// without `only` applies to.
const agentCommands = Serve | Prompt

// setting is one row of the settings table. The row is all a new setting
// needs: its flag, environment variable and file key, its help, its
// parsing and range check, and the positions in error messages follow.
type setting struct {
	flag, file, usage string
	kind              kind
	def               string
	ptr               func(*Settings) any
	// check vets a value beyond its kind. Nil means the kind's rule:
	// numbers must not be negative, durations must be positive.
	check func(v any) error
	// only lists the commands that use the setting; zero means the
	// commands that run an agent (serve and prompt). A command neither
	// offers nor reads the others.
	only Command
}

// zeroOrPositive accepts a timeout of 0, meaning never, or above zero.
func zeroOrPositive(v any) error {
	if v.(time.Duration) < 0 {
		return errors.New("want 0 (never) or a duration above zero")
	}
	return nil
}

var table = []setting{
	{flag: "backend", file: "backend", usage: "model server preset: " + strings.Join(openai.PresetNames(), ", ") + "; when none is given, a --model-url off DeepSeek's host means " + openai.GenericPreset, def: "deepseek", ptr: func(s *Settings) any { return &s.Backend }, check: oneOf(openai.PresetNames()...)},
	{flag: "model", file: "model", usage: `model id, or "scripted[:FILE]" for the offline scripted model (default: the backend's default)`, ptr: func(s *Settings) any { return &s.Model }},
	{flag: "model-url", file: "modelUrl", usage: "base URL of an OpenAI-compatible server (default: the backend's)", ptr: func(s *Settings) any { return &s.ModelURL }, check: optional(httpURL)},
	{flag: "api-key-env", file: "apiKeyEnv", usage: `environment variable that holds the API key; "" for servers without keys (default: the backend's, DEEPSEEK_API_KEY for deepseek)`, ptr: func(s *Settings) any { return &s.APIKeyEnv }, check: optional(envName)},
	{flag: "thinking", file: "thinking", usage: "thinking mode where the backend has one: on, off (default: the backend's)", ptr: func(s *Settings) any { return &s.Thinking }, check: oneOf("", "on", "off")},
	{flag: "model-timeout", file: "modelTimeout", usage: "how long the model server may send nothing (no response, or not a byte of it) before the call fails; raise it for a slow local server", kind: kDuration, def: "1m", ptr: func(s *Settings) any { return &s.ModelTimeout }},
	{flag: "model-first-token-timeout", file: "modelFirstTokenTimeout", usage: "how long the model server may take from its response to the answer's first data, keep-alive comments not counting (a server that queues requests); 0 never", kind: kDuration, def: "10m", ptr: func(s *Settings) any { return &s.ModelFirstTokenTimeout }, check: zeroOrPositive},
	{flag: "model-idle-timeout", file: "modelIdleTimeout", usage: "how long a streaming answer may send no data, keep-alive comments not counting, before the call fails; 0 never", kind: kDuration, def: "2m", ptr: func(s *Settings) any { return &s.ModelIdleTimeout }, check: zeroOrPositive},
	{flag: "model-call-timeout", file: "modelCallTimeout", usage: "how long one model call may take in all, its retries included; 0 never", kind: kDuration, def: "15m", ptr: func(s *Settings) any { return &s.ModelCallTimeout }, check: zeroOrPositive},
	{flag: "max-model-answer-bytes", file: "maxModelAnswerBytes", usage: "bytes of one model answer (its text, reasoning and tool calls together) dshd takes; one event of its stream, a non-streamed answer's body and the server's list of models may take twice as many; an answer over it fails its turn, naming the setting, and is not retried", kind: kInt, def: strconv.Itoa(openai.DefaultMaxAnswerBytes), ptr: func(s *Settings) any { return &s.MaxModelAnswerBytes }, check: between(65536, 1<<30)},
	{flag: "state-dir", file: "stateDir", usage: "where session journals live (default $XDG_STATE_HOME/dshd)", ptr: func(s *Settings) any { return &s.StateDir }, only: agentCommands | Sessions},
	{flag: "max-open-journals", file: "maxOpenJournals", usage: "journal files kept open at once; an idle session beyond them reopens its journal when it next writes", kind: kInt, def: "128", ptr: func(s *Settings) any { return &s.MaxOpenJournals }, check: atLeast(1), only: agentCommands},
	{flag: "max-journal-bytes", file: "maxJournalBytes", usage: "journal size in bytes at which a session takes no new prompt (start a new session; a turn already running may finish past it) and a fork that would start there is not made; 0 unbounded", kind: kInt, def: "1073741824", ptr: func(s *Settings) any { return &s.MaxJournalBytes }, check: atLeast(0), only: agentCommands},
	{flag: "min-free-disk-bytes", file: "minFreeDiskBytes", usage: "bytes the state directory's file system must have free for a prompt to run or a session to be created; 0 does not check", kind: kInt, def: "268435456", ptr: func(s *Settings) any { return &s.MinFreeDiskBytes }, check: atLeast(0), only: agentCommands},
	{flag: "max-state-bytes", file: "maxStateBytes", usage: "bytes the sessions in the state directory may hold (journals and sidecars: what it held at start plus what this daemon writes) before no prompt runs and no session is created; set it below a quota statfs does not show, such as an emptyDir sizeLimit; 0 unbounded", kind: kInt, def: "0", ptr: func(s *Settings) any { return &s.MaxStateBytes }, check: atLeast(0), only: agentCommands},
	{flag: "checkout-timeout", file: "checkoutTimeout", usage: "how long the clone (and checkout of the revision) of a session on a checkout of its own may take before it is stopped and the session is not created", kind: kDuration, def: "5m", ptr: func(s *Settings) any { return &s.CheckoutTimeout }, only: Serve},
	{flag: "log-level", file: "logLevel", usage: "debug, info, warn, error", def: "info", ptr: func(s *Settings) any { return &s.LogLevel }, check: oneOf("debug", "info", "warn", "error"), only: agentCommands | Sessions},
	{flag: "log-format", file: "logFormat", usage: "text or json (logs always go to stderr)", def: "text", ptr: func(s *Settings) any { return &s.LogFormat }, check: oneOf("text", "json"), only: agentCommands | Sessions},
	{flag: "listen", file: "listen", usage: "serve a socket instead of stdio: unix:PATH, tcp:HOST:PORT, or http://HOST:PORT / https://HOST:PORT for ACP's remote transport (WebSocket and Streamable HTTP on /acp)", ptr: func(s *Settings) any { return &s.Listen }, check: optional(address), only: Serve},
	{flag: "token-file", file: "tokenFile", usage: "file holding the token clients must authenticate with (or set DSHD_TOKEN; at least 16 characters; never on the command line)", ptr: func(s *Settings) any { return &s.TokenFile }, only: Serve},
	{flag: "max-line-bytes", file: "maxLineBytes", usage: "longest incoming message line, in bytes", kind: kInt, def: "67108864", ptr: func(s *Settings) any { return &s.MaxLineBytes }, check: atLeast(1), only: Serve},
	{flag: "preauth-max-line-bytes", file: "preauthMaxLineBytes", usage: "longest line before a connection has authenticated (token daemons); a longer one closes it", kind: kInt, def: "65536", ptr: func(s *Settings) any { return &s.PreauthMaxLineBytes }, check: atLeast(1), only: Serve},
	{flag: "handshake-timeout", file: "handshakeTimeout", usage: "how long a connection has to authenticate (token daemons); 0 never closes it", kind: kDuration, def: "10s", ptr: func(s *Settings) any { return &s.HandshakeTimeout }, check: zeroOrPositive, only: Serve},
	{flag: "max-queued-input-bytes", file: "maxQueuedInputBytes", usage: "bytes of a connection's requests read but not yet handled; beyond it reading pauses", kind: kInt, def: "4194304", ptr: func(s *Settings) any { return &s.MaxQueuedInputBytes }, check: atLeast(1), only: Serve},
	{flag: "max-queued-output-bytes", file: "maxQueuedOutputBytes", usage: "bytes of answers and notifications waiting for a slow reader; beyond it its requests are not read", kind: kInt, def: "4194304", ptr: func(s *Settings) any { return &s.MaxQueuedOutputBytes }, check: atLeast(1), only: Serve},
	{flag: "write-timeout", file: "writeTimeout", usage: "how long a peer may leave our output unread before its connection is closed; 0 never", kind: kDuration, def: "60s", ptr: func(s *Settings) any { return &s.WriteTimeout }, check: zeroOrPositive, only: Serve},
	{flag: "idle-timeout", file: "idleTimeout", usage: "how long a socket, WebSocket or Streamable HTTP connection may be idle (nothing read, running or awaited) before it is closed; 0 never", kind: kDuration, def: "1h", ptr: func(s *Settings) any { return &s.IdleTimeout }, check: zeroOrPositive, only: Serve},
	{flag: "max-connections", file: "maxConnections", usage: "socket connections open at once (on an http(s) listener: TCP connections, and ACP connections apart); more are refused", kind: kInt, def: "1024", ptr: func(s *Settings) any { return &s.MaxConnections }, check: atLeast(1), only: Serve},
	{flag: "max-sessions-per-connection", file: "maxSessionsPerConnection", usage: "sessions one connection has open at once; one more is refused until one closes", kind: kInt, def: "1024", ptr: func(s *Settings) any { return &s.MaxSessionsPerConn }, check: atLeast(1), only: Serve},
	{flag: "max-additional-directories", file: "maxAdditionalDirectories", usage: "directories one session/new, load, resume or fork may name in additionalDirectories (each must exist, at most 4096 bytes long); more are refused", kind: kInt, def: "64", ptr: func(s *Settings) any { return &s.MaxAdditionalDirectories }, check: atLeast(1), only: Serve},
	{flag: "max-unauthenticated", file: "maxUnauthenticated", usage: "connections waiting to authenticate at once (token daemons); more are refused", kind: kInt, def: "64", ptr: func(s *Settings) any { return &s.MaxUnauthenticated }, check: atLeast(1), only: Serve},
	{flag: "max-auth-failures", file: "maxAuthFailures", usage: "failed authentications that close a connection and earn its source a penalty", kind: kInt, def: "3", ptr: func(s *Settings) any { return &s.MaxAuthFailures }, check: atLeast(1), only: Serve},
	{flag: "auth-penalty", file: "authPenalty", usage: "how long a source that failed authentication too often is refused, doubling each time (up to an hour)", kind: kDuration, def: "5s", ptr: func(s *Settings) any { return &s.AuthPenalty }, only: Serve},
	{flag: "tls-cert", file: "tlsCert", usage: "certificate file (PEM) of an https:// listener", ptr: func(s *Settings) any { return &s.TLSCert }, only: Serve},
	{flag: "tls-key", file: "tlsKey", usage: "private key file (PEM) of an https:// listener", ptr: func(s *Settings) any { return &s.TLSKey }, only: Serve},
	{flag: "drain-grace-seconds", file: "drainGraceSeconds", usage: "seconds running turns may go on after SIGTERM on an http(s) listener before they are cancelled and journaled", kind: kInt, def: "25", ptr: func(s *Settings) any { return &s.DrainGraceSeconds }, only: Serve},
	{flag: "close-timeout", file: "closeTimeout", usage: "how long the shutdown of an http(s) listener waits, after the drain, for the cancelled turns and then for the connections (their last answers written) to end, before it goes on without them", kind: kDuration, def: "5s", ptr: func(s *Settings) any { return &s.CloseTimeout }, only: Serve},
	{flag: "keepalive-seconds", file: "keepaliveSeconds", usage: "seconds between SSE keepalive comments and WebSocket pings on an http(s) listener (0: none)", kind: kInt, def: "15", ptr: func(s *Settings) any { return &s.KeepaliveSeconds }, only: Serve},
	{flag: "detach-timeout-seconds", file: "detachTimeoutSeconds", usage: "seconds a Streamable HTTP connection lives with no SSE stream open and no request before it ends, freeing its sessions for session/load elsewhere", kind: kInt, def: "30", check: atLeast(1), ptr: func(s *Settings) any { return &s.DetachTimeoutSeconds }, only: Serve},
	{flag: "affinity-cookie", file: "affinityCookie", usage: "cookie an http(s) listener sets to this host's name on each new connection, for load balancers that keep a client on one backend by cookie (\"\": none)", def: "dshd_affinity", ptr: func(s *Settings) any { return &s.AffinityCookie }, check: optional(cookieName), only: Serve},
	{flag: "header-timeout", file: "headerTimeout", usage: "how long an http(s) listener waits for a request's headers (every request, before its token is checked)", kind: kDuration, def: "10s", ptr: func(s *Settings) any { return &s.HeaderTimeout }, only: Serve},
	{flag: "keepalive-timeout", file: "keepaliveTimeout", usage: "how long an http(s) listener keeps an idle keep-alive TCP connection open between two requests (its ACP connection goes on, on the next one)", kind: kDuration, def: "2m", ptr: func(s *Settings) any { return &s.KeepaliveTimeout }, only: Serve},
	{flag: "max-header-bytes", file: "maxHeaderBytes", usage: "largest request head (request line and headers) an http(s) listener takes; a larger one is answered 431", kind: kInt, def: "1048576", ptr: func(s *Settings) any { return &s.MaxHeaderBytes }, check: between(4096, 1<<30), only: Serve},
	{flag: "http2-max-streams", file: "http2MaxStreams", usage: "HTTP/2 streams (requests, SSE streams) one connection to an http(s) listener may have open at once; its client's further requests wait", kind: kInt, def: "4096", ptr: func(s *Settings) any { return &s.HTTP2MaxStreams }, check: between(1, 1<<31-1), only: Serve},
	{flag: "mode", file: "mode", usage: "default permission mode of new sessions: ask, accept-edits, yolo", def: "ask", ptr: func(s *Settings) any { return &s.Mode }, check: oneOf("ask", "accept-edits", "yolo")},
	{flag: "max-turn-requests", file: "maxTurnRequests", usage: "most model calls in one prompt turn", kind: kInt, def: "100", ptr: func(s *Settings) any { return &s.MaxTurnRequests }, check: atLeast(1)},
	{flag: "max-tokens", file: "maxTokens", usage: "output token cap per model call (0: the server's default)", kind: kInt, def: "0", ptr: func(s *Settings) any { return &s.MaxTokens }},
	{flag: "max-tokens-per-turn", file: "maxTokensPerTurn", usage: "tokens (input and output) one prompt turn may spend with every subagent below it, in this process or another (0: unbounded)", kind: kInt, def: "0", ptr: func(s *Settings) any { return &s.MaxTokensPerTurn }, check: atLeast(0)},
	{flag: "context-window", file: "contextWindow", usage: "context window in tokens (0: the model's, else 128000)", kind: kInt, def: "0", ptr: func(s *Settings) any { return &s.ContextWindow }},
	{flag: "max-depth", file: "maxDepth", usage: "how deep subagents may nest (0 forbids delegation)", kind: kInt, def: "3", ptr: func(s *Settings) any { return &s.MaxDepth }},
	{flag: "max-tasks", file: "maxTasks", usage: "most background tasks (commands, subagents) a session runs at once", kind: kInt, def: "16", ptr: func(s *Settings) any { return &s.MaxTasks }, check: atLeast(1)},
	{flag: "max-kept-tasks", file: "maxKeptTasks", usage: "most background tasks a session remembers, running or settled, each with its output; beyond it the oldest settled one is forgotten (its journal records stay) and its id says so", kind: kInt, def: "256", ptr: func(s *Settings) any { return &s.MaxKeptTasks }, check: between(1, 1<<20)},
	{flag: "task-output-limit", file: "taskOutputLimit", usage: "bytes of output each background task keeps (the tail)", kind: kInt, def: "262144", ptr: func(s *Settings) any { return &s.TaskOutput }, check: atLeast(1024)},
	{flag: "max-child-output-bytes", file: "maxChildOutputBytes", usage: "bytes of an acp child agent's answer the parent keeps for the model (the start; the rest is counted and said)", kind: kInt, def: "262144", ptr: func(s *Settings) any { return &s.MaxChildOutput }, check: atLeast(1024)},
	{flag: "max-child-requests", file: "maxChildRequests", usage: "requests of an acp child agent (to read a file, ask permission, run a terminal) its parent serves at once; beyond them the parent reads no more from it until one is answered", kind: kInt, def: "256", ptr: func(s *Settings) any { return &s.MaxChildRequests }, check: atLeast(1)},
	{flag: "max-read-bytes", file: "maxReadBytes", usage: "bytes one read of a local file may hold (read_file, an acp child agent's fs/read_text_file); a larger read is refused, asking for fewer lines. A child's reads share a budget of the larger of this and --max-queued-output-bytes until their answers are queued", kind: kInt, def: "33554432", ptr: func(s *Settings) any { return &s.MaxReadBytes }, check: between(1024, 1<<30)},
	{flag: "max-held-child-updates", file: "maxHeldChildUpdates", usage: "session updates an acp child agent sends for session ids it has not announced yet that its parent holds for a while, all ids together (their bytes are bounded by --max-queued-input-bytes); beyond them they are dropped", kind: kInt, def: "1024", ptr: func(s *Settings) any { return &s.MaxHeldChildUpdates }, check: atLeast(1)},
	{flag: "task-idle-release", file: "taskIdleRelease", usage: "how long a settled background subagent keeps its child (process, connection) for a quick continue; later a continue restores it", kind: kDuration, def: "10m", ptr: func(s *Settings) any { return &s.TaskIdleRelease }},
	{flag: "max-instructions-bytes", file: "maxInstructionsBytes", usage: "bytes of a workspace's AGENTS.md the system prompt holds; the rest is cut, and the model and the user are told", kind: kInt, def: "65536", ptr: func(s *Settings) any { return &s.MaxInstructionsBytes }, check: between(1024, 1<<30)},
	{flag: "max-command-file-bytes", file: "maxCommandFileBytes", usage: "largest slash command file read (.dshd/commands, .claude/commands, the user's); a larger one is not used, with a warning", kind: kInt, def: "262144", ptr: func(s *Settings) any { return &s.MaxCommandFileBytes }, check: between(1024, 1<<30)},
	{flag: "max-agent-file-bytes", file: "maxAgentFileBytes", usage: "largest agent definition file read (.dshd/agents, .claude/agents, the user's), and largest outputSchema file one names; a larger one is not used, with a warning", kind: kInt, def: "262144", ptr: func(s *Settings) any { return &s.MaxAgentFileBytes }, check: between(1024, 1<<30)},
	{flag: "max-command-files", file: "maxCommandFiles", usage: "most slash command files read from a workspace (.dshd/commands, then .claude/commands, each by name), and apart from it from the user's; the rest are not read, with a warning", kind: kInt, def: "512", ptr: func(s *Settings) any { return &s.MaxCommandFiles }, check: between(1, 1<<20)},
	{flag: "max-agent-files", file: "maxAgentFiles", usage: "most agent definition files read from a workspace (.dshd/agents, then .claude/agents, each by name), and apart from it from the user's; the rest are not read, with a warning", kind: kInt, def: "128", ptr: func(s *Settings) any { return &s.MaxAgentFiles }, check: between(1, 1<<20)},
	{flag: "max-ignore-file-bytes", file: "maxIgnoreFileBytes", usage: "largest .gitignore or .git/info/exclude glob and grep read; a larger one is not used, and their result says so", kind: kInt, def: "1048576", ptr: func(s *Settings) any { return &s.MaxIgnoreFileBytes }, check: between(1024, 1<<30)},
	{flag: "sandbox", file: "sandbox", usage: "how commands are confined: workspace-write (writes only in the workspace, --sandbox-writable roots, a private temp dir and the toolchain caches), read-only (only the temp dir), off", def: "workspace-write", ptr: func(s *Settings) any { return &s.Sandbox }, check: oneOf("workspace-write", "read-only", "off")},
	{flag: "sandbox-network", file: "sandboxNetwork", usage: "whether sandboxed commands reach the network (false: only their own loopback)", kind: kBool, def: "true", ptr: func(s *Settings) any { return &s.SandboxNetwork }},
	{flag: "sandbox-writable", file: "sandboxWritableRoots", usage: "another absolute directory sandboxed commands may write below (repeatable)", kind: kList, ptr: func(s *Settings) any { return &s.SandboxWritable }, check: absolute},
	{flag: "sandbox-readable", file: "sandboxReadableRoots", usage: "confine commands' reads to these absolute directories, the workspace, the writable roots and the system directories (repeatable; default: reads everywhere)", kind: kList, ptr: func(s *Settings) any { return &s.SandboxReadable }, check: absolute},
	{flag: "sandbox-caches", file: "sandboxCaches", usage: "let sandboxed commands write the toolchain caches (~/.cache, ~/go, ~/.npm, ~/.cargo, ~/.rustup, ~/.gradle, ~/.m2, ...)", kind: kBool, def: "true", ptr: func(s *Settings) any { return &s.SandboxCaches }},
	{flag: "sandbox-fallback", file: "sandboxFallback", usage: "where the kernel cannot confine commands (no Landlock): refuse them, or run them unconfined", def: "refuse", ptr: func(s *Settings) any { return &s.SandboxFallback }, check: oneOf("refuse", "unconfined")},
	{flag: "mcp-sandbox", file: "mcpSandbox", usage: "where stdio MCP servers run: commands (in the commands' sandbox, with the session's workspace) or off (unconfined; they still die with dshd)", def: "commands", ptr: func(s *Settings) any { return &s.MCPSandbox }, check: oneOf("commands", "off")},
	{flag: "mcp-max-output-bytes", file: "mcpMaxOutputBytes", usage: "bytes of an MCP tool call's result given to the model (the rest is cut, saying so) and of its structured content passed to the editor", kind: kInt, def: "100000", ptr: func(s *Settings) any { return &s.MCPMaxOutputBytes }, check: atLeast(1024)},
	{flag: "mcp-progress-interval", file: "mcpProgressInterval", usage: "shortest time between two progress updates of one MCP tool call shown to the editor (and journaled); the ones between are dropped", kind: kDuration, def: "250ms", ptr: func(s *Settings) any { return &s.MCPProgressInterval }},
	{flag: "mcp-max-tools", file: "mcpMaxTools", usage: "most tools one MCP server may give the model; the first ones it lists are used", kind: kInt, def: "128", ptr: func(s *Settings) any { return &s.MCPMaxTools }, check: atLeast(1)},
	{flag: "mcp-max-tool-description-bytes", file: "mcpMaxToolDescriptionBytes", usage: "where an MCP tool's description is cut", kind: kInt, def: "8192", ptr: func(s *Settings) any { return &s.MCPMaxToolDescriptionBytes }, check: atLeast(64)},
	{flag: "mcp-max-tool-schema-bytes", file: "mcpMaxToolSchemaBytes", usage: "largest input schema (as JSON) of an MCP tool; a tool with a larger one is left out, with a warning", kind: kInt, def: "65536", ptr: func(s *Settings) any { return &s.MCPMaxToolSchemaBytes }, check: atLeast(1024)},
	{flag: "mcp-start-timeout", file: "mcpStartTimeout", usage: "how long an MCP server has to start, answer the handshake and list its tools before the session goes on without it (session/new waits for it)", kind: kDuration, def: "30s", ptr: func(s *Settings) any { return &s.MCPStartTimeout }},
	{flag: "mcp-call-timeout", file: "mcpCallTimeout", usage: "how long one MCP tool call may take before it is cancelled and the model told so; 0 never", kind: kDuration, def: "10m", ptr: func(s *Settings) any { return &s.MCPCallTimeout }, check: zeroOrPositive},
	{flag: "mcp-max-tool-schema-depth", file: "mcpMaxToolSchemaDepth", usage: "deepest nesting of objects and arrays in an MCP tool's input schema; a tool with a deeper one is left out, with a warning", kind: kInt, def: "32", ptr: func(s *Settings) any { return &s.MCPMaxToolSchemaDepth }, check: atLeast(4)},
	{flag: "mcp-max-message-bytes", file: "mcpMaxMessageBytes", usage: "longest message an MCP server may send (a stdio line, an HTTP response body, an SSE event); an answer over it fails its call, naming the limit", kind: kInt, def: "16777216", ptr: func(s *Settings) any { return &s.MCPMaxMessageBytes }, check: atLeast(1024)},
	{flag: "command-env", file: "commandEnv", usage: "the environment commands start from: all, core (PATH, HOME, USER, SHELL, TMPDIR, LANG, ...), none", def: "all", ptr: func(s *Settings) any { return &s.CommandEnv }, check: oneOf("all", "core", "none")},
	{flag: "command-env-exclude", file: "commandEnvExclude", usage: "drop the variables matching this glob (case ignored) from commands' environment (repeatable)", kind: kList, ptr: func(s *Settings) any { return &s.CommandEnvDrop }, check: glob},
	{flag: "command-env-include-only", file: "commandEnvIncludeOnly", usage: "pass commands only the variables matching one of these globs (repeatable)", kind: kList, ptr: func(s *Settings) any { return &s.CommandEnvOnly }, check: glob},
	{flag: "command-env-set", file: "commandEnvSet", usage: "NAME=VALUE to set in commands' environment (repeatable)", kind: kList, ptr: func(s *Settings) any { return &s.CommandEnvSet }, check: assignment},
	{flag: "command-env-keep-secret-names", file: "commandEnvKeepSecretNames", usage: "pass commands the variables whose names look like credentials: KEY, SECRET, TOKEN, PASSWORD… (dshd's own token and model key never are)", kind: kBool, def: "false", ptr: func(s *Settings) any { return &s.CommandEnvSecret }},
	{flag: "command-output-bytes", file: "commandOutputBytes", usage: "bytes of a run_command's output the model gets (the tail; the rest is cut, saying so); also the outputByteLimit an editor's terminal is asked for, and what it sends beyond is cut all the same", kind: kInt, def: "30000", ptr: func(s *Settings) any { return &s.CommandOutputBytes }, check: between(1024, 1<<30)},
	{flag: "command-timeout", file: "commandTimeout", usage: "how long a run_command that gives no timeout may run before it and its children are stopped (at most --command-max-timeout)", kind: kDuration, def: "2m", ptr: func(s *Settings) any { return &s.CommandTimeout }, check: seconds},
	{flag: "command-max-timeout", file: "commandMaxTimeout", usage: "the longest timeout a run_command may give itself", kind: kDuration, def: "10m", ptr: func(s *Settings) any { return &s.CommandMaxTimeout }, check: seconds},
	{flag: "subagent", file: "subagents", usage: "subagent tool binding TOOLNAME=PROVIDER[,model=M][,agent=NAME] (repeatable; default: subagent=spawn, subagent_fork=fork)", kind: kList, ptr: func(s *Settings) any { return &s.Subagents }},
}
