// This file turns a binding's options (StartRequest.Options) and the named
// agents into a target: what to start or dial, and how.

package acpprovider

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/dshd/dshd/internal/sameprogram"
	"github.com/dshd/dshd/internal/secret"
	"github.com/dshd/dshd/internal/shellwords"
	"github.com/dshd/dshd/internal/suggest"
)

// Binding option keys (`--subagent TOOL=acp,key=value,...`). A flag value
// cannot contain a comma, so list values are words separated by spaces,
// with '…' and "…" quoting and backslash escapes, as in a shell; anything
// more complex belongs in a named agent in the config file.
const (
	// KeyAgent selects a named agent; the other keys override its fields.
	KeyAgent = "agent"
	// KeyCommand is the program to run on stdio (PATH is searched).
	KeyCommand = "command"
	// KeyArgs are its arguments (words).
	KeyArgs = "args"
	// KeyEnv sets environment variables: words of the form NAME=VALUE.
	KeyEnv = "env"
	// KeyPassEnv passes variables of the daemon's environment that
	// [secret.Name] would hold back (an agent's API key): words
	// naming them; a name that is not set is skipped.
	KeyPassEnv = "pass-env"
	// KeyUnsetEnv removes environment variables: words naming them.
	KeyUnsetEnv = "unset-env"
	// KeyCwd is "session" (default) or an absolute path.
	KeyCwd = "cwd"
	// KeyAddress reaches a daemon: unix:PATH or tcp:HOST:PORT, or an
	// agent behind ACP's remote transport: ws://, wss://, http:// or
	// https://HOST:PORT/acp. Several remote URLs (words), or one whose
	// host name resolves to several addresses, make a fleet: each run is
	// placed on one endpoint (see fleet.go).
	KeyAddress = "address"
	// KeyToken is the daemon's token; KeyTokenEnv names an environment
	// variable holding it (kept out of process listings).
	KeyToken    = "token"
	KeyTokenEnv = "token-env"
	// KeyTimeout bounds one run, KeyStartTimeout the start: a Go duration
	// ("90s", "2m") or a number of seconds.
	KeyTimeout      = "timeout"
	KeyStartTimeout = "start-timeout"
	// KeyForwardMCP (true/false, bare for true) passes the parent
	// session's MCP servers to the child.
	KeyForwardMCP = "forward-mcp"
	// KeyRepo gives the child a checkout of its own: a dshd child clones
	// this repository URL (at KeyRev, a branch, tag or commit; default the
	// default branch) into a workspace on its host and works there,
	// instead of on the parent's files through fs/* and terminal/*.
	KeyRepo = "repo"
	KeyRev  = "rev"
)

// selfUnset are the daemon settings a child dshd must not inherit from
// the environment: it serves its stdio, without a token.
var selfUnset = []string{"DSHD_LISTEN", "DSHD_TOKEN"}

// target is a resolved binding: one agent to run or reach.
type target struct {
	// label names the agent in messages and logs.
	label string
	// network is "" for a stdio command, "unix" or "tcp" (address is the
	// socket path or host:port), or "remote" (address is the endpoint's
	// URL; endpoints lists a fleet's URLs as configured).
	network, address string
	endpoints        []string
	token            string
	command          string
	args             []string
	setEnv           []string // NAME=value, in order
	passEnv          []string // names taken from the daemon's environment
	unsetEnv         []string
	// cwd is "" for the parent session's cwd, else absolute.
	cwd          string
	timeout      time.Duration
	startTimeout time.Duration
	forwardMCP   bool
	// repo and rev give the child its own checkout ("": the parent's
	// workspace).
	repo, rev string
	// self is set for a child dshd: this program, by default or by name.
	self bool
	// box is a stdio child's sandbox (sandbox.go).
	box confinement
}

// stdio reports whether the target is a command on stdio.
func (t *target) stdio() bool { return t.network == "" }

// where names the agent's address in messages: unix:PATH, tcp:HOST:PORT
// or the endpoint's URL.
func (t *target) where() string {
	if t.network == "remote" {
		return t.address
	}
	return t.network + ":" + t.address
}

// isRemoteAddress reports whether an address names the remote transport.
func isRemoteAddress(a string) bool {
	for _, s := range []string{"ws://", "wss://", "http://", "https://"} {
		if strings.HasPrefix(strings.TrimSpace(a), s) {
			return true
		}
	}
	return false
}

// parseEndpoints reads one or more remote URLs, separated by spaces.
func parseEndpoints(s string) ([]string, error) {
	words := strings.Fields(s)
	for _, w := range words {
		u, err := url.Parse(w)
		switch {
		case err != nil:
			return nil, err
		case u.Scheme != "ws" && u.Scheme != "wss" && u.Scheme != "http" && u.Scheme != "https":
			return nil, fmt.Errorf("%q: want ws://, wss://, http:// or https://", w)
		case u.Host == "" || u.Port() == "":
			return nil, fmt.Errorf("%q: want SCHEME://HOST:PORT/acp", w)
		case u.User != nil:
			return nil, fmt.Errorf("%q: put the token in token-env=, not the URL", w)
		}
	}
	return words, nil
}

// optionKeys are the binding options the provider takes, in the order
// messages show them.
var optionKeys = []string{KeyAgent, KeyCommand, KeyArgs, KeyEnv, KeyPassEnv, KeyUnsetEnv, KeyCwd, KeyAddress,
	KeyToken, KeyTokenEnv, KeyTimeout, KeyStartTimeout, KeyForwardMCP, KeyRepo, KeyRev,
	KeySandbox, KeyWritable, KeyNetwork}

// OptionKeys lists the binding options the provider takes.
func (p *Provider) OptionKeys() []string { return slices.Clone(optionKeys) }

// CheckOptions reports the first binding option that cannot work (an
// unknown key or named agent, a bad address, an unterminated quote, a
// duration that is none, a token variable that is not set), so that a
// daemon refuses the binding at start; it starts and dials nothing. A
// named agent is checked with opts {"agent": NAME}.
func (p *Provider) CheckOptions(opts map[string]string) error {
	_, err := p.resolveTarget(opts)
	return err
}

// resolveTarget builds the target of a binding.
func (p *Provider) resolveTarget(opts map[string]string) (*target, error) {
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		if !slices.Contains(optionKeys, k) {
			return nil, fmt.Errorf("unknown acp binding option %q (known: %s)%s", k, strings.Join(optionKeys, ", "), suggest.DidYouMean(k, optionKeys))
		}
	}
	_, hasCommand := opts[KeyCommand]
	if _, hasAddress := opts[KeyAddress]; hasCommand && hasAddress {
		// Each replaces the other (over a named agent's), so one of the two
		// would be dropped without a word.
		return nil, fmt.Errorf("command= starts an agent and address= reaches a running one: give one of them")
	}
	var a AgentConfig
	label := ""
	if name, ok := opts[KeyAgent]; ok {
		cfg, found := p.o.Agents[name]
		if !found {
			known := slices.Sorted(maps.Keys(p.o.Agents))
			return nil, fmt.Errorf("no agent named %q is configured (configured: %s)%s", name, listOrNone(known), suggest.DidYouMean(name, known))
		}
		if cfg.Command != "" && cfg.Address != "" {
			return nil, fmt.Errorf("command starts an agent and address reaches a running one: give one of them")
		}
		a, label = cfg, name
		a.Args = slices.Clone(cfg.Args)
		a.Env = maps.Clone(cfg.Env)
		a.PassEnv = slices.Clone(cfg.PassEnv)
		a.Unset = slices.Clone(cfg.Unset)
		a.Writable = slices.Clone(cfg.Writable)
	}
	argsSet := a.Args != nil
	if v, ok := opts[KeyCommand]; ok {
		a.Command, a.Address = v, ""
	}
	if v, ok := opts[KeyArgs]; ok {
		words, err := shellwords.Split(v)
		if err != nil {
			return nil, fmt.Errorf("args: %w", err)
		}
		a.Args, argsSet = words, true
	}
	if v, ok := opts[KeyEnv]; ok {
		words, err := shellwords.Split(v)
		if err != nil {
			return nil, fmt.Errorf("env: %w", err)
		}
		if a.Env == nil {
			a.Env = map[string]string{}
		}
		for _, w := range words {
			name, value, ok := strings.Cut(w, "=")
			if !ok || !validEnvName(name) {
				return nil, fmt.Errorf("env: %q is not NAME=VALUE", w)
			}
			a.Env[name] = value
		}
	}
	for _, l := range []struct {
		key string
		dst *[]string
	}{{KeyPassEnv, &a.PassEnv}, {KeyUnsetEnv, &a.Unset}} {
		if v, ok := opts[l.key]; ok {
			words, err := shellwords.Split(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", l.key, err)
			}
			*l.dst = append(*l.dst, words...)
		}
	}
	if v, ok := opts[KeyCwd]; ok {
		a.Cwd = v
	}
	if v, ok := opts[KeyAddress]; ok {
		a.Address, a.Command = v, ""
	}
	if v, ok := opts[KeyToken]; ok {
		a.Token = v
	}
	if name, ok := opts[KeyTokenEnv]; ok {
		v, set := os.LookupEnv(name)
		if !set || v == "" {
			return nil, fmt.Errorf("token-env: the environment variable %s is not set", name)
		}
		a.Token = v
	}
	for _, d := range []struct {
		key string
		dst *time.Duration
	}{{KeyTimeout, &a.Timeout}, {KeyStartTimeout, &a.StartTimeout}} {
		if v, ok := opts[d.key]; ok {
			dur, err := parseDuration(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", d.key, err)
			}
			*d.dst = dur
		}
	}
	if v, ok := opts[KeyForwardMCP]; ok {
		if v == "" {
			a.ForwardMCP = true
		} else {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, fmt.Errorf("forward-mcp: %q is not true or false", v)
			}
			a.ForwardMCP = b
		}
	}
	if err := sandboxOptions(&a, opts); err != nil {
		return nil, err
	}
	t, err := p.targetOf(a, label, argsSet)
	if err != nil {
		return nil, err
	}
	if t.box, err = p.confinementOf(t, a); err != nil {
		return nil, err
	}
	t.box.entry = entryOf(opts)
	t.repo, t.rev = opts[KeyRepo], opts[KeyRev]
	switch {
	case t.rev != "" && t.repo == "":
		return nil, fmt.Errorf("rev=%s needs repo=", t.rev)
	case strings.HasPrefix(t.repo, "-") || strings.HasPrefix(t.rev, "-"):
		return nil, fmt.Errorf("repo= and rev= must not start with -")
	}
	return t, nil
}

// targetOf checks a and fills in the defaults.
func (p *Provider) targetOf(a AgentConfig, label string, argsSet bool) (*target, error) {
	t := &target{
		token:        a.Token,
		timeout:      a.Timeout,
		startTimeout: a.StartTimeout,
		forwardMCP:   a.ForwardMCP,
		passEnv:      a.PassEnv,
		unsetEnv:     a.Unset,
	}
	if t.startTimeout <= 0 {
		t.startTimeout = p.o.StartTimeout
	}
	if t.timeout < 0 {
		t.timeout = 0
	}
	switch a.Cwd {
	case "", "session":
	default:
		if !filepath.IsAbs(a.Cwd) {
			return nil, fmt.Errorf("cwd %q: want \"session\" or an absolute path", a.Cwd)
		}
		t.cwd = filepath.Clean(a.Cwd)
	}
	for _, name := range slices.Sorted(maps.Keys(a.Env)) {
		if !validEnvName(name) {
			return nil, fmt.Errorf("env: %q is not a variable name", name)
		}
		t.setEnv = append(t.setEnv, name+"="+a.Env[name])
	}
	for _, l := range []struct {
		key   string
		names []string
	}{{KeyPassEnv, a.PassEnv}, {KeyUnsetEnv, a.Unset}} {
		for _, name := range l.names {
			if !validEnvName(name) {
				return nil, fmt.Errorf("%s: %q is not a variable name", l.key, name)
			}
		}
	}
	switch {
	case isRemoteAddress(a.Address):
		urls, err := parseEndpoints(a.Address)
		if err != nil {
			return nil, fmt.Errorf("address %q: %w", a.Address, err)
		}
		t.network, t.address, t.endpoints = "remote", urls[0], urls
		if label == "" {
			label = a.Address
		}
	case a.Address != "":
		network, where, ok := strings.Cut(a.Address, ":")
		switch {
		case !ok || where == "":
			return nil, fmt.Errorf("address %q: want unix:PATH, tcp:HOST:PORT or a ws://, wss://, http:// or https:// URL", a.Address)
		case network == "unix":
		case network == "tcp":
			if _, _, err := splitHostPort(where); err != nil {
				return nil, fmt.Errorf("address %q: %w", a.Address, err)
			}
		default:
			return nil, fmt.Errorf("address %q: want unix:PATH, tcp:HOST:PORT or a ws://, wss://, http:// or https:// URL", a.Address)
		}
		t.network, t.address = network, where
		if label == "" {
			label = a.Address
		}
	case a.Command != "":
		t.command, t.args = a.Command, a.Args
		if label == "" {
			label = filepath.Base(a.Command)
		}
		if self, err := p.selfPath(); err == nil {
			t.self = sameprogram.Is(a.Command, self)
		}
	default:
		self, err := p.selfPath()
		if err != nil {
			return nil, fmt.Errorf("cannot find this program's executable to run as the child: %w", err)
		}
		t.command, t.self = self, true
		t.args = a.Args
		if !argsSet {
			t.args = p.o.DefaultArgs
			if t.args == nil {
				t.args = []string{"serve"}
			}
			t.setEnv = append(slices.Clone(p.o.DefaultEnv), t.setEnv...)
		}
		// The child inherits the daemon's environment (less what looks
		// like a credential), and a socket daemon's DSHD_LISTEN would make
		// it listen too instead of serving its stdio.
		t.unsetEnv = append(slices.Clone(t.unsetEnv), selfUnset...)
		if label == "" {
			label = "dshd"
		}
	}
	t.label = label
	return t, nil
}

// selfPath is the program a child dshd runs: Options.Self, else this
// executable.
func (p *Provider) selfPath() (string, error) {
	if p.o.Self != "" {
		return p.o.Self, nil
	}
	return os.Executable()
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// parseDuration reads a Go duration or a number of seconds, above zero: a
// zero timeout would cut every run off before it starts.
func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	d, err := time.ParseDuration(s)
	if n, nerr := strconv.ParseFloat(s, 64); nerr == nil {
		d, err = time.Duration(n*float64(time.Second)), nil
	}
	switch {
	case err != nil:
		return 0, fmt.Errorf("%q is not a duration (like 90s or 2m) or a number of seconds", s)
	case d < 0:
		return 0, fmt.Errorf("%q is negative", s)
	case d == 0:
		return 0, fmt.Errorf("%q: want more than zero", s)
	}
	return d, nil
}

func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r < unicode.MaxASCII && unicode.IsLetter(r) || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func splitHostPort(s string) (host, port string, err error) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 || i == len(s)-1 {
		return "", "", errors.New("want HOST:PORT")
	}
	host, port = s[:i], s[i+1:]
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", "", fmt.Errorf("port %q is not a number", port)
	}
	return strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"), port, nil
}

// environ returns the child's environment: the daemon's, without the
// unset names and without what [secret.Name] holds back, then the
// pass-env names taken from the daemon's environment, then the set
// entries, which replace either. An unset name removes all three.
func (t *target) environ() []string {
	unset := map[string]bool{}
	for _, n := range t.unsetEnv {
		unset[n] = true
	}
	explicit := map[string]bool{}
	for _, kv := range t.setEnv {
		name, _, _ := strings.Cut(kv, "=")
		explicit[name] = true
	}
	passed := map[string]bool{}
	for _, n := range t.passEnv {
		passed[n] = true
	}
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !unset[name] && !explicit[name] && !passed[name] && !secret.Name(name) {
			env = append(env, kv)
		}
	}
	for _, name := range t.passEnv {
		if v, ok := os.LookupEnv(name); ok && !unset[name] && !explicit[name] {
			env = append(env, name+"="+v)
			explicit[name] = true // a name listed twice is passed once
		}
	}
	for _, kv := range t.setEnv {
		name, _, _ := strings.Cut(kv, "=")
		if !unset[name] {
			env = append(env, kv)
		}
	}
	return env
}
