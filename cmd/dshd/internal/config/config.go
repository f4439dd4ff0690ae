// Package config resolves dshd's settings from flags, DSHD_* environment
// variables and the config file ($XDG_CONFIG_HOME/dshd/config.json), in that
// order of precedence, over built-in defaults.
//
// Every setting is declared once in the table below, which drives the
// flags, their help text, the environment variable names and the file
// keys, so `dshd serve --help` always lists all of them.
package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
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

	StateDir  string `json:"stateDir,omitempty"`
	LogLevel  string `json:"logLevel,omitempty"`
	LogFormat string `json:"logFormat,omitempty"`
	Listen    string `json:"listen,omitempty"`
	// Token is not read from the table: the serve command takes it from
	// DSHD_TOKEN or TokenFile, never from the command line.
	Token     string `json:"-"`
	TokenFile string `json:"tokenFile,omitempty"`

	// Limits of every connection (acp/rpc.Limits) and of the listener.
	MaxLineBytes            int `json:"maxLineBytes,omitempty"`
	PreauthMaxLineBytes     int `json:"preauthMaxLineBytes,omitempty"`
	HandshakeTimeoutSeconds int `json:"handshakeTimeoutSeconds,omitempty"`
	MaxQueuedInputBytes     int `json:"maxQueuedInputBytes,omitempty"`
	MaxQueuedOutputBytes    int `json:"maxQueuedOutputBytes,omitempty"`
	WriteTimeoutSeconds     int `json:"writeTimeoutSeconds,omitempty"`
	IdleTimeoutSeconds      int `json:"idleTimeoutSeconds,omitempty"`
	MaxConnections          int `json:"maxConnections,omitempty"`
	MaxUnauthenticated      int `json:"maxUnauthenticated,omitempty"`
	MaxAuthFailures         int `json:"maxAuthFailures,omitempty"`
	AuthPenaltySeconds      int `json:"authPenaltySeconds,omitempty"`

	Mode            string `json:"mode,omitempty"`
	MaxTurnRequests int    `json:"maxTurnRequests,omitempty"`
	MaxTokens       int    `json:"maxTokens,omitempty"`
	ContextWindow   int    `json:"contextWindow,omitempty"`
	MaxDepth        int    `json:"maxDepth,omitempty"`

	// Subagents are tool bindings, "TOOLNAME=PROVIDER[,key=value...]".
	Subagents []string `json:"subagents,omitempty"`
	// Agents are named ACP agents the acp provider can start (file only).
	Agents map[string]Agent `json:"agents,omitempty"`

	apiKeyEnvSet bool
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
	Unset   []string          `json:"unsetEnv,omitempty"`
	// Cwd is "session" (default: the parent session's cwd) or an absolute
	// path.
	Cwd string `json:"cwd,omitempty"`
	// TimeoutSeconds bounds one run; StartTimeoutSeconds the handshake.
	TimeoutSeconds      int  `json:"timeoutSeconds,omitempty"`
	StartTimeoutSeconds int  `json:"startTimeoutSeconds,omitempty"`
	ForwardMCP          bool `json:"forwardMcpServers,omitempty"`
}

type kind int

const (
	kString kind = iota
	kInt
	kList
)

// setting is one row of the settings table.
type setting struct {
	flag, file, usage string
	kind              kind
	def               string
	ptr               func(*Settings) any
}

var table = []setting{
	{flag: "backend", file: "backend", usage: "model server preset: deepseek, openai, ollama, vllm, llamacpp, openrouter", def: "deepseek", ptr: func(s *Settings) any { return &s.Backend }},
	{flag: "model", file: "model", usage: `model id, or "scripted[:FILE]" for the offline scripted model (default: the backend's default)`, ptr: func(s *Settings) any { return &s.Model }},
	{flag: "model-url", file: "modelUrl", usage: "base URL of an OpenAI-compatible server (default: the backend's)", ptr: func(s *Settings) any { return &s.ModelURL }},
	{flag: "api-key-env", file: "apiKeyEnv", usage: `environment variable that holds the API key; "" for servers without keys (default: the backend's, DEEPSEEK_API_KEY for deepseek)`, ptr: func(s *Settings) any { return &s.APIKeyEnv }},
	{flag: "thinking", file: "thinking", usage: "thinking mode where the backend has one: on, off (default: the backend's)", ptr: func(s *Settings) any { return &s.Thinking }},
	{flag: "state-dir", file: "stateDir", usage: "where session journals live (default $XDG_STATE_HOME/dshd)", ptr: func(s *Settings) any { return &s.StateDir }},
	{flag: "log-level", file: "logLevel", usage: "debug, info, warn, error", def: "info", ptr: func(s *Settings) any { return &s.LogLevel }},
	{flag: "log-format", file: "logFormat", usage: "text or json (logs always go to stderr)", def: "text", ptr: func(s *Settings) any { return &s.LogFormat }},
	{flag: "listen", file: "listen", usage: "serve a socket instead of stdio: unix:PATH or tcp:HOST:PORT", ptr: func(s *Settings) any { return &s.Listen }},
	{flag: "token-file", file: "tokenFile", usage: "file holding the token clients must authenticate with (or set DSHD_TOKEN; at least 16 characters)", ptr: func(s *Settings) any { return &s.TokenFile }},
	{flag: "max-line-bytes", file: "maxLineBytes", usage: "longest incoming message line, in bytes", kind: kInt, def: "67108864", ptr: func(s *Settings) any { return &s.MaxLineBytes }},
	{flag: "preauth-max-line-bytes", file: "preauthMaxLineBytes", usage: "longest line before a connection has authenticated (token daemons); a longer one closes it", kind: kInt, def: "65536", ptr: func(s *Settings) any { return &s.PreauthMaxLineBytes }},
	{flag: "handshake-timeout-seconds", file: "handshakeTimeoutSeconds", usage: "seconds a connection has to authenticate (token daemons); 0 never closes it", kind: kInt, def: "10", ptr: func(s *Settings) any { return &s.HandshakeTimeoutSeconds }},
	{flag: "max-queued-input-bytes", file: "maxQueuedInputBytes", usage: "bytes of a connection's requests read but not yet handled; beyond it reading pauses", kind: kInt, def: "4194304", ptr: func(s *Settings) any { return &s.MaxQueuedInputBytes }},
	{flag: "max-queued-output-bytes", file: "maxQueuedOutputBytes", usage: "bytes of answers and notifications waiting for a slow reader; beyond it its requests are not read", kind: kInt, def: "4194304", ptr: func(s *Settings) any { return &s.MaxQueuedOutputBytes }},
	{flag: "write-timeout-seconds", file: "writeTimeoutSeconds", usage: "seconds a peer may leave our output unread before its connection is closed; 0 never", kind: kInt, def: "60", ptr: func(s *Settings) any { return &s.WriteTimeoutSeconds }},
	{flag: "idle-timeout-seconds", file: "idleTimeoutSeconds", usage: "seconds a socket connection may be idle (nothing read, running or awaited) before it is closed; 0 never", kind: kInt, def: "3600", ptr: func(s *Settings) any { return &s.IdleTimeoutSeconds }},
	{flag: "max-connections", file: "maxConnections", usage: "socket connections open at once; more are refused", kind: kInt, def: "1024", ptr: func(s *Settings) any { return &s.MaxConnections }},
	{flag: "max-unauthenticated", file: "maxUnauthenticated", usage: "connections waiting to authenticate at once (token daemons); more are refused", kind: kInt, def: "64", ptr: func(s *Settings) any { return &s.MaxUnauthenticated }},
	{flag: "max-auth-failures", file: "maxAuthFailures", usage: "failed authentications that close a connection and earn its source a penalty", kind: kInt, def: "3", ptr: func(s *Settings) any { return &s.MaxAuthFailures }},
	{flag: "auth-penalty-seconds", file: "authPenaltySeconds", usage: "seconds a source that failed authentication too often is refused, doubling each time (up to an hour)", kind: kInt, def: "5", ptr: func(s *Settings) any { return &s.AuthPenaltySeconds }},
	{flag: "mode", file: "mode", usage: "default permission mode of new sessions: ask, accept-edits, yolo", def: "ask", ptr: func(s *Settings) any { return &s.Mode }},
	{flag: "max-turn-requests", file: "maxTurnRequests", usage: "most model calls in one prompt turn", kind: kInt, def: "100", ptr: func(s *Settings) any { return &s.MaxTurnRequests }},
	{flag: "max-tokens", file: "maxTokens", usage: "output token cap per model call (0: the server's default)", kind: kInt, def: "0", ptr: func(s *Settings) any { return &s.MaxTokens }},
	{flag: "context-window", file: "contextWindow", usage: "context window in tokens (0: the model's, else 128000)", kind: kInt, def: "0", ptr: func(s *Settings) any { return &s.ContextWindow }},
	{flag: "max-depth", file: "maxDepth", usage: "how deep subagents may nest (0 forbids delegation)", kind: kInt, def: "3", ptr: func(s *Settings) any { return &s.MaxDepth }},
	{flag: "subagent", file: "subagents", usage: "subagent tool binding TOOLNAME=PROVIDER[,model=M][,agent=NAME] (repeatable; default: subagent=spawn, subagent_fork=fork)", kind: kList, ptr: func(s *Settings) any { return &s.Subagents }},
}

// EnvName returns the environment variable of a flag: DSHD_ + upper snake.
func EnvName(flag string) string {
	return "DSHD_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// AddFlags declares every setting on fs, plus --config.
func AddFlags(fs *pflag.FlagSet) {
	fs.String("config", "", "config file (default $XDG_CONFIG_HOME/dshd/config.json; env DSHD_CONFIG)")
	for _, s := range table {
		usage := fmt.Sprintf("%s (env %s)", s.usage, EnvName(s.flag))
		switch s.kind {
		case kInt:
			n, _ := strconv.Atoi(s.def)
			fs.Int(s.flag, n, usage)
		case kList:
			fs.StringArray(s.flag, nil, usage)
		default:
			fs.String(s.flag, s.def, usage)
		}
	}
}

// DefaultPath returns the default config file path.
func DefaultPath(lookupEnv func(string) (string, bool)) string {
	dir, _ := lookupEnv("XDG_CONFIG_HOME")
	if dir == "" {
		home, _ := lookupEnv("HOME")
		if home == "" {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "dshd", "config.json")
}

// Load resolves the settings. lookupEnv is os.LookupEnv in production.
func Load(fs *pflag.FlagSet, lookupEnv func(string) (string, bool)) (*Settings, error) {
	var st Settings
	path, _ := fs.GetString("config")
	explicit := path != ""
	if !explicit {
		if p, ok := lookupEnv("DSHD_CONFIG"); ok && p != "" {
			path, explicit = p, true
		} else {
			path = DefaultPath(lookupEnv)
		}
	}
	fileKeys := map[string]json.RawMessage{}
	if path != "" {
		data, err := os.ReadFile(path)
		switch {
		case err == nil:
			if err := json.Unmarshal(data, &fileKeys); err != nil {
				return nil, fmt.Errorf("config %s: %w", path, err)
			}
			if raw, ok := fileKeys["agents"]; ok {
				if err := json.Unmarshal(raw, &st.Agents); err != nil {
					return nil, fmt.Errorf("config %s: agents: %w", path, err)
				}
			}
		case errors.Is(err, fs_ErrNotExist) && !explicit:
		default:
			return nil, fmt.Errorf("config: %w", err)
		}
	}

	for _, s := range table {
		p := s.ptr(&st)
		f := fs.Lookup(s.flag)
		env, envSet := lookupEnv(EnvName(s.flag))
		raw, inFile := fileKeys[s.file]
		if s.flag == "api-key-env" {
			st.apiKeyEnvSet = f.Changed || envSet || inFile
		}
		switch {
		case f.Changed:
			if err := setFromFlag(fs, s, p); err != nil {
				return nil, err
			}
		case envSet:
			if err := setFromString(s, p, env); err != nil {
				return nil, fmt.Errorf("%s: %w", EnvName(s.flag), err)
			}
		case inFile:
			if err := json.Unmarshal(raw, p); err != nil {
				return nil, fmt.Errorf("config %s: %s: %w", path, s.file, err)
			}
		default:
			if err := setFromString(s, p, s.def); err != nil {
				return nil, err
			}
		}
	}
	return &st, st.validate()
}

// APIKeyEnvSet reports whether --api-key-env was given anywhere (an empty
// value then means "no key needed", not "the backend's default").
func (s *Settings) APIKeyEnvSet() bool { return s.apiKeyEnvSet }

var fs_ErrNotExist = fs.ErrNotExist

func setFromFlag(fs *pflag.FlagSet, s setting, p any) error {
	var err error
	switch s.kind {
	case kInt:
		*p.(*int), err = fs.GetInt(s.flag)
	case kList:
		*p.(*[]string), err = fs.GetStringArray(s.flag)
	default:
		*p.(*string), err = fs.GetString(s.flag)
	}
	return err
}

func setFromString(s setting, p any, v string) error {
	switch s.kind {
	case kInt:
		if v == "" {
			v = "0"
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("not a number: %q", v)
		}
		*p.(*int) = n
	case kList:
		if v == "" {
			*p.(*[]string) = nil
			return nil
		}
		*p.(*[]string) = strings.Split(v, ";")
	default:
		*p.(*string) = v
	}
	return nil
}

func (s *Settings) validate() error {
	switch s.Mode {
	case "ask", "accept-edits", "yolo":
	default:
		return fmt.Errorf("mode %q: want ask, accept-edits or yolo", s.Mode)
	}
	switch s.LogFormat {
	case "text", "json":
	default:
		return fmt.Errorf("log format %q: want text or json", s.LogFormat)
	}
	if s.MaxDepth < 0 || s.MaxTurnRequests < 0 || s.MaxTokens < 0 || s.ContextWindow < 0 {
		return errors.New("numeric settings must not be negative")
	}
	return nil
}
