// This file defines a server configuration, its validation, the transports
// this package supports and the environment a stdio server gets.

package mcp

import (
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/dshd/dshd/internal/secret"
)

// Transport names, as ServerConfig.Transport spells them.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
	TransportSSE   = "sse"
)

// EnvVar is one environment variable of a stdio server.
type EnvVar struct {
	Name  string
	Value string
}

// Header is one HTTP header sent to an http or sse server.
type Header struct {
	Name  string
	Value string
}

// ServerConfig is one MCP server to connect to. It mirrors ACP's McpServer
// without depending on it: acp/server converts its types to this one.
type ServerConfig struct {
	// Name identifies the server; it becomes the SERVER part of its tools'
	// names. Names must be unique within one Connect.
	Name string
	// Transport is TransportStdio (or ""), TransportHTTP or TransportSSE.
	Transport string

	// Command, Args and Env describe a stdio server. Command is a path
	// (absolute, or relative to the session's cwd) or a bare name, which
	// is looked up in the PATH the server gets: Env's PATH, else ours
	// (editors send "npx" or "python3", though ACP asks for a path).
	Command string
	Args    []string
	Env     []EnvVar

	// URL and Headers describe an http or sse server.
	URL     string
	Headers []Header
}

// transport returns the normalised transport name.
func (c *ServerConfig) transport() string {
	if c.Transport == "" {
		return TransportStdio
	}
	return c.Transport
}

// Transports says which MCP transports really work.
type Transports struct {
	Stdio bool
	HTTP  bool
	SSE   bool
}

// Capabilities returns the transports this package supports, so acp/server
// can advertise mcpCapabilities truthfully. All three work: stdio through
// our own process handling, http through the SDK's streamable client, sse
// through the SDK's (deprecated-protocol) SSE client.
func Capabilities() Transports {
	return Transports{Stdio: true, HTTP: true, SSE: true}
}

// DefaultInheritEnv lists the variables of our own environment a stdio
// server inherits when [Options].InheritEnv is nil: what programs need to
// find executables, their home and temp dirs, their locale and time zone,
// proxies and extra CA certificates. Nothing else leaks through (API keys
// in our environment stay ours); the server's configured Env is added on
// top and wins.
var DefaultInheritEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "TMPDIR",
	"LANG", "LC_ALL", "LC_CTYPE", "TZ",
	"XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
	"http_proxy", "https_proxy", "no_proxy", "all_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS",
	// Windows needs these to start most programs at all.
	"SYSTEMROOT", "SystemRoot", "COMSPEC", "PATHEXT", "WINDIR", "USERPROFILE", "APPDATA", "LOCALAPPDATA", "TEMP", "TMP",
}

// validate checks c, returning an error that matches [ErrInvalidConfig]
// and never quotes an env or header value.
func (c *ServerConfig) validate() error {
	bad := func(format string, args ...any) error {
		return &Error{Kind: ErrInvalidConfig, Msg: fmt.Sprintf(format, args...)}
	}
	if strings.TrimSpace(c.Name) == "" {
		return bad("the server has no name")
	}
	switch c.transport() {
	case TransportStdio:
		if c.Command == "" {
			return bad("a stdio server needs a command")
		}
		if strings.ContainsRune(c.Command, 0) {
			return bad("the command contains a NUL byte")
		}
		for _, a := range c.Args {
			if strings.ContainsRune(a, 0) {
				return bad("an argument contains a NUL byte")
			}
		}
		for _, e := range c.Env {
			if e.Name == "" || strings.ContainsAny(e.Name, "=\x00") {
				return bad("invalid environment variable name %q", e.Name)
			}
			if strings.ContainsRune(e.Value, 0) {
				return bad("environment variable %s has a NUL byte in its value", e.Name)
			}
		}
	case TransportHTTP, TransportSSE:
		u, err := url.Parse(c.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return bad("a %s server needs an absolute http(s) URL", c.transport())
		}
		for _, h := range c.Headers {
			if h.Name == "" || strings.ContainsAny(h.Name, " \t\r\n:\x00") {
				return bad("invalid header name %q", h.Name)
			}
			if strings.ContainsAny(h.Value, "\r\n\x00") {
				return bad("header %s has a control character in its value", h.Name)
			}
		}
	default:
		return &Error{Kind: ErrUnsupportedTransport, Msg: fmt.Sprintf("unknown transport %q", c.Transport)}
	}
	return nil
}

// secrets returns the values that must never appear in a warning or a log
// line about c: header values, env values that are long or whose name
// says they are secret ([secret.Name]), the URL's password and query values, and the
// words of each ("Bearer x"). Short ordinary env values ("on", "debug")
// are left alone, or they would blank out common words everywhere.
func (c *ServerConfig) secrets() []string {
	var out []string
	add := func(v string, min int) {
		if len(v) >= min {
			out = append(out, v)
		}
		for _, w := range strings.Fields(v) {
			if len(w) >= min && w != v {
				out = append(out, w)
			}
		}
	}
	for _, e := range c.Env {
		if secret.Name(e.Name) {
			add(e.Value, minSecretLen)
		} else {
			add(e.Value, minPlainSecretLen)
		}
	}
	for _, h := range c.Headers {
		add(h.Value, minSecretLen)
	}
	if u, err := url.Parse(c.URL); err == nil {
		if p, ok := u.User.Password(); ok {
			add(p, minSecretLen)
		}
		for _, vs := range u.Query() {
			for _, v := range vs {
				add(v, minSecretLen)
			}
		}
	}
	return out
}

// minSecretLen is the shortest secret-looking value scrubbed from messages;
// minPlainSecretLen the shortest env value with an ordinary name.
const (
	minSecretLen      = 3
	minPlainSecretLen = 8
)

// buildEnv returns a stdio server's environment: the inherit names found
// by lookup, then extra, each name once, extra winning.
func buildEnv(inherit []string, lookup func(string) (string, bool), extra []EnvVar) []string {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	seen := make(map[string]int)
	var env []string
	set := func(name, value string) {
		kv := name + "=" + value
		if i, ok := seen[name]; ok {
			env[i] = kv
			return
		}
		seen[name] = len(env)
		env = append(env, kv)
	}
	for _, name := range inherit {
		if v, ok := lookup(name); ok {
			set(name, v)
		}
	}
	for _, e := range extra {
		set(e.Name, e.Value)
	}
	return env
}
