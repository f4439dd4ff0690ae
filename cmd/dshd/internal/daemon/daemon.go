// Package daemon assembles a dshd from its settings: the model backend, the
// session store, the tools and subagent providers every session shares,
// and the ACP server over them. It is wiring only; every behaviour lives in
// the packages it wires.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/acp/server"
	"github.com/dshd/dshd/agent"
	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/agent/llm/openai"
	"github.com/dshd/dshd/agent/llm/scripted"
	"github.com/dshd/dshd/agent/session"
	"github.com/dshd/dshd/cmd/dshd/internal/config"
	"github.com/dshd/dshd/cmd/dshd/internal/version"
	"github.com/dshd/dshd/internal/metrics"
	"github.com/dshd/dshd/prompt/commands"
	"github.com/dshd/dshd/subagents"
	acpprovider "github.com/dshd/dshd/subagents/acp"
	"github.com/dshd/dshd/subagents/definition"
	"github.com/dshd/dshd/subagents/fork"
	"github.com/dshd/dshd/subagents/spawn"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/builtin"
	"github.com/dshd/dshd/tools/mcp"
	"github.com/dshd/dshd/tools/permission"
	"github.com/dshd/dshd/tools/sandbox"
	"github.com/dshd/dshd/tools/subagent"
	"github.com/dshd/dshd/tools/tasks"
	"github.com/dshd/dshd/tools/workspace"
)

// Daemon is an assembled dshd.
type Daemon struct {
	Server   *server.Server
	Settings *config.Settings
	// Model is the backend, ModelID its default model.
	Model   llm.Model
	ModelID string
	// Metrics counts what the daemon does (served on /metrics by an
	// http(s) listener).
	Metrics *metrics.Metrics

	closers []func()
}

// Close releases what New acquired.
func (d *Daemon) Close() {
	for i := len(d.closers) - 1; i >= 0; i-- {
		d.closers[i]()
	}
}

// New assembles a daemon. lookupEnv is os.LookupEnv in production.
func New(st *config.Settings, log *slog.Logger, lookupEnv func(string) (string, bool)) (*Daemon, error) {
	d := &Daemon{Settings: st}
	b, err := openBackend(st, log, lookupEnv)
	if err != nil {
		return nil, err
	}
	// Every model request is counted for /metrics.
	d.Metrics = metrics.New()
	b.model = d.Metrics.Model(b.model)
	d.Model, d.ModelID = b.model, b.modelID

	dir, err := SessionsDir(st.StateDir)
	if err != nil {
		return nil, err
	}
	store, err := session.NewStore(dir, &session.StoreOptions{Logger: log, OpenJournals: st.MaxOpenJournals, Limits: session.DiskLimits{
		MaxJournalBytes: int64(st.MaxJournalBytes), MinFreeBytes: int64(st.MinFreeDiskBytes), MaxStateBytes: int64(st.MaxStateBytes),
		Settings: session.DiskSettings{MaxJournalBytes: "--max-journal-bytes", MinFreeBytes: "--min-free-disk-bytes", MaxStateBytes: "--max-state-bytes"}}})
	if err != nil {
		return nil, StateDirError(st, err)
	}

	base := tools.NewRegistry(nil)
	for _, t := range append(builtin.Builtins(builtinOptions(st)), tasks.Tools()...) {
		if _, err := base.Register(t); err != nil {
			return nil, err
		}
	}
	agents := &agent.Registry{}
	svc := subagents.NewService(&subagents.ServiceOptions{Logger: log})
	acpProvider, err := acpprovider.New(&acpprovider.Options{
		DefaultArgs: childArgs(st),
		DefaultEnv:  childEnv(b),
		Agents:      namedAgents(st.Agents),
		// A child process runs in a sandbox derived from the commands'.
		Sandbox:        commandSandbox(st, log, lookupEnv),
		StateDirOf:     childStateDir,
		MaxOutputBytes: st.MaxChildOutput,
		MaxTerminals:   st.MaxTasks,
		// A child's terminal is a background task it runs on us.
		MaxTerminalOutput: st.TaskOutput,
		MaxReadBytes:      st.MaxReadBytes,
		MaxRequests:       st.MaxChildRequests,
		MaxHeld:           st.MaxHeldChildUpdates,
		// Its logs and messages name the flags, as README spells them.
		Settings: acpprovider.Settings{
			MaxOutputBytes: "--max-child-output-bytes", MaxTerminals: "--max-tasks", MaxTerminalOutput: "--task-output-limit", MaxReadBytes: "--max-read-bytes",
			MaxRequests: "--max-child-requests", MaxHeld: "--max-held-child-updates",
			StateDirOf: "--state-dir, DSHD_STATE_DIR or config file",
		},
		Limits:  connLimits(st),
		Version: version.String(),
		Logger:  log,
	})
	if err != nil {
		return nil, err
	}
	d.closers = append(d.closers, func() { acpProvider.Close() })
	for _, p := range []subagents.Provider{
		spawn.New(&spawn.Options{InProcessOptions: subagents.InProcessOptions{MaxTurnRequests: st.MaxTurnRequests, Logger: log}}),
		fork.New(&fork.Options{MaxTurnRequests: st.MaxTurnRequests, Logger: log}),
		acpProvider,
	} {
		dispose, err := svc.RegisterProvider(p)
		if err != nil {
			return nil, err
		}
		d.closers = append(d.closers, dispose)
	}
	bindings, err := parseBindings(st, svc, acpProvider)
	if err != nil {
		return nil, err
	}
	for i, bnd := range bindings {
		dispose, err := subagent.Bind(svc, base, bnd, &subagent.BindOptions{Logger: log})
		if err != nil {
			return nil, bindingError(st, i, bnd, err)
		}
		d.closers = append(d.closers, dispose)
	}
	// A binding's tools and deny-tools name tools of the registry, the
	// bindings included, as a definition's do; a name none has is a typo
	// the child's start would only report when the model first delegates.
	var toolNames []string
	for _, t := range base.Tools() {
		toolNames = append(toolNames, t.Name())
	}
	for i, bnd := range bindings {
		if err := subagent.CheckTools(bnd, toolNames); err != nil {
			return nil, bindingError(st, i, bnd, err)
		}
	}

	// Agent definitions: the user's are checked (and their mistakes
	// logged) now, each workspace's when a session opens there.
	configHome := filepath.Dir(filepath.Dir(config.DefaultPath(lookupEnv)))
	if configHome == "." {
		configHome = ""
	}
	defs := definition.New(definition.Options{
		Service: svc,
		Base:    base,
		User:    definition.UserSources(configHome),
		Models:  b.catalog.ids,
		Logger:  log,
		// A file over the bound, or a directory over the count, names the
		// flag.
		MaxFileBytes: int64(st.MaxAgentFileBytes),
		MaxFiles:     st.MaxAgentFiles,
		Settings:     definition.Settings{MaxFileBytes: "--max-agent-file-bytes", MaxFiles: "--max-agent-files"},
	})
	defs.CheckUser()

	mode, err := permission.ParseMode(st.Mode)
	if err != nil {
		return nil, err
	}
	runner, err := commandRunner(st, b.keyEnv, b.key(), bindings, log, lookupEnv)
	if err != nil {
		return nil, err
	}
	mcpSB, err := mcpSandbox(st.MCPSandbox, runner, log)
	if err != nil {
		return nil, err
	}
	mcpCaps := mcp.Capabilities()
	srv, err := server.New(server.Options{
		Name:               "dshd",
		Title:              "dshd",
		Version:            version.String(),
		Store:              store,
		Model:              b.model,
		DefaultModel:       b.modelID,
		Models:             b.catalog.list,
		ModelsReady:        b.catalog.ready,
		KeyEnv:             b.keyEnv,
		HasKey:             b.hasKey,
		Tools:              base,
		Runner:             runner,
		Subagents:          svc,
		Definitions:        defs,
		UserCommands:       commands.UserSources(configHome),
		Commands:           commandLimits(st),
		Instructions:       instructionsLimits(st),
		Reads:              workspace.ReadLimits{MaxReadBytes: st.MaxReadBytes, Setting: "--max-read-bytes"},
		Agents:             agents,
		Dirs:               server.DirLimits{Max: st.MaxAdditionalDirectories, Setting: "--max-additional-directories"},
		Mode:               mode,
		MaxTurnRequests:    st.MaxTurnRequests,
		MaxTokens:          st.MaxTokens,
		ContextWindow:      st.ContextWindow,
		MaxTokensPerTurn:   st.MaxTokensPerTurn,
		MaxDepth:           st.MaxDepth,
		NoDelegation:       st.MaxDepth == 0,
		Tasks:              tasks.Options{MaxRunning: st.MaxTasks, MaxKept: st.MaxKeptTasks, Settings: tasks.Settings{MaxRunning: "--max-tasks", MaxKept: "--max-kept-tasks", OutputLimit: "--task-output-limit"}, OutputLimit: st.TaskOutput, IdleRelease: st.TaskIdleRelease},
		Token:              st.Token,
		Limits:             connLimits(st),
		MaxSessionsPerConn: st.MaxSessionsPerConn,
		Settings:           server.Settings{MaxSessionsPerConn: "--max-sessions-per-connection", CheckoutTimeout: "--checkout-timeout"},
		CheckoutTimeout:    st.CheckoutTimeout,
		ConnectMCP:         connectMCP(log, mcpSB, mcpLimits(st)),
		MCPHTTP:            mcpCaps.HTTP,
		MCPSSE:             mcpCaps.SSE,
		SetupWarnings:      sandboxWarnings(st.Sandbox, runner),
		Logger:             log,
		Observer:           d.Metrics,
	})
	if err != nil {
		return nil, err
	}
	d.Server = srv
	d.Metrics.Watch(srv)
	return d, nil
}

// childArgs are the arguments of a child dshd started by the acp
// provider: `serve` with the settings a child shares with its parent
// (its sandbox settings too, so its commands are confined as ours). The
// child runs in ask mode, so every action it takes is put to the parent's
// permission gate, which applies the parent's own mode.
func childArgs(st *config.Settings) []string {
	// --listen= keeps the child on its stdio whatever a config file it
	// reads says: a "listen" there is the parent's socket (the provider
	// already unsets DSHD_LISTEN for the same reason).
	args := []string{"serve", "--listen=", "--mode", "ask", "--log-level", st.LogLevel, "--log-format", st.LogFormat}
	add := func(flag, v string) {
		if v != "" {
			args = append(args, flag, v)
		}
	}
	if st.IsSet("backend") {
		// Only a backend the user named: without one, a model URL means a
		// generic server, and the child must read it the same way.
		add("--backend", st.Backend)
	}
	add("--model", st.Model)
	add("--model-url", st.ModelURL)
	add("--thinking", st.Thinking)
	for _, f := range []struct {
		flag string
		d    time.Duration
	}{{"model-timeout", st.ModelTimeout}, {"model-first-token-timeout", st.ModelFirstTokenTimeout},
		{"model-idle-timeout", st.ModelIdleTimeout}, {"model-call-timeout", st.ModelCallTimeout},
		// A child given a binding's repo= clones it itself.
		{"checkout-timeout", st.CheckoutTimeout},
		// Its commands run within our bounds.
		{"command-timeout", st.CommandTimeout}, {"command-max-timeout", st.CommandMaxTimeout}} {
		if st.IsSet(f.flag) {
			add("--"+f.flag, f.d.String())
		}
	}
	for _, f := range []struct {
		flag string
		n    int
	}{{"max-model-answer-bytes", st.MaxModelAnswerBytes}, {"command-output-bytes", st.CommandOutputBytes},
		// Its own background tasks are bounded as ours.
		{"max-tasks", st.MaxTasks}, {"max-kept-tasks", st.MaxKeptTasks}, {"task-output-limit", st.TaskOutput}} {
		if st.IsSet(f.flag) {
			add("--"+f.flag, strconv.Itoa(f.n))
		}
	}
	args = append(args, commandEnvArgs(st)...)
	if st.StateDir != "" {
		if abs, err := filepath.Abs(st.StateDir); err == nil {
			args = append(args, "--state-dir", abs)
		}
	}
	if st.APIKeyEnvSet() {
		args = append(args, "--api-key-env", st.APIKeyEnv)
	}
	// The child's commands (and MCP servers) run in the sandbox the
	// parent's run in.
	args = append(args, "--sandbox", st.Sandbox, "--sandbox-fallback", st.SandboxFallback, "--mcp-sandbox", st.MCPSandbox,
		"--sandbox-network="+strconv.FormatBool(st.SandboxNetwork), "--sandbox-caches="+strconv.FormatBool(st.SandboxCaches))
	for _, d := range st.SandboxWritable {
		args = append(args, "--sandbox-writable", d)
	}
	for _, d := range st.SandboxReadable {
		args = append(args, "--sandbox-readable", d)
	}
	for _, f := range []struct {
		flag string
		n    int
	}{{"--max-tokens", st.MaxTokens}, {"--context-window", st.ContextWindow}, {"--max-turn-requests", st.MaxTurnRequests}} {
		if f.n > 0 {
			args = append(args, f.flag, strconv.Itoa(f.n))
		}
	}
	// The child's journals are bounded as ours (0, off, included).
	args = append(args, "--max-journal-bytes", strconv.Itoa(st.MaxJournalBytes), "--min-free-disk-bytes", strconv.Itoa(st.MinFreeDiskBytes),
		"--max-state-bytes", strconv.Itoa(st.MaxStateBytes))
	// It reads a workspace's files within our bounds.
	for _, f := range []struct {
		flag string
		n    int
	}{{"--max-instructions-bytes", st.MaxInstructionsBytes}, {"--max-command-file-bytes", st.MaxCommandFileBytes},
		{"--max-agent-file-bytes", st.MaxAgentFileBytes}, {"--max-ignore-file-bytes", st.MaxIgnoreFileBytes},
		{"--max-command-files", st.MaxCommandFiles}, {"--max-agent-files", st.MaxAgentFiles},
		{"--max-read-bytes", st.MaxReadBytes}} {
		if f.n > 0 {
			args = append(args, f.flag, strconv.Itoa(f.n))
		}
	}
	// It is given our session's additional directories, as many as we
	// take.
	if n := st.MaxAdditionalDirectories; n > 0 {
		args = append(args, "--max-additional-directories", strconv.Itoa(n))
	}
	return args
}

// commandEnvArgs are the flags that give a child dshd's commands the
// environment policy ours have, for what the parent was given. A child
// inherits our environment and reads the config file we read when it is
// the default one, but not our flags nor a --config file. A NAME=VALUE to
// set is passed on unless it came from the environment, which the child
// inherits: a value given there stays out of the child's arguments, which
// any process on the machine may read.
func commandEnvArgs(st *config.Settings) []string {
	var args []string
	if st.IsSet("command-env") {
		args = append(args, "--command-env", st.CommandEnv)
	}
	if st.IsSet("command-env-keep-secret-names") {
		args = append(args, "--command-env-keep-secret-names="+strconv.FormatBool(st.CommandEnvSecret))
	}
	for _, l := range []struct {
		flag  string
		items []string
	}{{"--command-env-exclude", st.CommandEnvDrop}, {"--command-env-include-only", st.CommandEnvOnly}, {"--command-env-set", st.CommandEnvSet}} {
		if l.flag == "--command-env-set" && st.FromEnv("command-env-set") {
			continue
		}
		for _, it := range l.items {
			args = append(args, l.flag, it)
		}
	}
	return args
}

// childEnv is what a child dshd gets on top of the daemon's environment:
// the model's API key (the variable's or the stored one), which the acp
// provider otherwise holds back with every variable named like a
// credential.
func childEnv(b *backend) []string {
	if k := b.key(); b.keyEnv != "" && k != "" {
		return []string{b.keyEnv + "=" + k}
	}
	return nil
}

// namedAgents converts the config file's agents.
func namedAgents(in map[string]config.Agent) map[string]acpprovider.AgentConfig {
	out := make(map[string]acpprovider.AgentConfig, len(in))
	for name, a := range in {
		out[name] = acpprovider.AgentConfig{
			Command:      a.Command,
			Args:         a.Args,
			Address:      a.Address,
			Token:        a.Token,
			Env:          a.Env,
			PassEnv:      a.PassEnv,
			Unset:        a.Unset,
			Cwd:          a.Cwd,
			Timeout:      time.Duration(a.TimeoutSeconds) * time.Second,
			StartTimeout: time.Duration(a.StartTimeoutSeconds) * time.Second,
			ForwardMCP:   a.ForwardMCP,
			Sandbox:      a.Sandbox,
			Writable:     a.Writable,
			NoNetwork:    a.Network != nil && !*a.Network,
		}
	}
	return out
}

// bindingError is err about bindings[i]: a configuration error naming the
// binding as the user gave it, or, for a default binding, the binding.
func bindingError(st *config.Settings, i int, bnd subagent.Binding, err error) error {
	if len(st.Subagents) > 0 {
		return st.Invalid(fmt.Sprintf("subagent[%d]", i), err)
	}
	return fmt.Errorf("subagent binding %s: %w", bnd, err)
}

// fileKeys are the config file's names of the acp options a named agent
// spells otherwise than a binding does.
var fileKeys = map[string]string{
	acpprovider.KeyPassEnv:      "passEnv",
	acpprovider.KeyUnsetEnv:     "unsetEnv",
	acpprovider.KeyTimeout:      "timeoutSeconds",
	acpprovider.KeyStartTimeout: "startTimeoutSeconds",
	acpprovider.KeyForwardMCP:   "forwardMcpServers",
}

// asFileKey is the provider's mistake about a named agent with the option
// it starts with spelled as the config file spells it (passEnv, not
// pass-env), so that it names the key the user wrote.
func asFileKey(err error) error {
	msg := err.Error()
	for key, file := range fileKeys {
		if rest, ok := strings.CutPrefix(msg, key+": "); ok {
			return errors.New(file + ": " + rest)
		}
	}
	return err
}

// parseBindings reads the subagent bindings and checks them, and the named
// agents, against the providers: every provider is registered by now, so a
// name none has, an option it does not take or a value it cannot use is a
// mistake to report at start.
func parseBindings(st *config.Settings, svc *subagents.Service, acpProvider *acpprovider.Provider) ([]subagent.Binding, error) {
	for _, name := range slices.Sorted(maps.Keys(st.Agents)) {
		if err := acpProvider.CheckOptions(map[string]string{acpprovider.KeyAgent: name}); err != nil {
			return nil, st.Invalid("agents."+name, asFileKey(err))
		}
	}
	if len(st.Subagents) == 0 {
		return subagent.DefaultBindings(), checkPrograms(st, nil)
	}
	var out []subagent.Binding
	for i, f := range st.Subagents {
		b, err := subagent.ParseBinding(f)
		if err == nil {
			err = subagent.Check(b, svc)
		}
		if err != nil {
			return nil, st.Invalid(fmt.Sprintf("subagent[%d]", i), err)
		}
		out = append(out, b)
	}
	return out, checkPrograms(st, out)
}

// checkPrograms holds the named agents' and the acp bindings' own
// programs to what is there, last, so that every other mistake is told
// first: a program that is on no PATH, or not at its path, would fail
// only at the first delegation. A relative path with a slash is the
// child's cwd's (the session's) and a socket agent has no program:
// neither is looked up. A workspace's definitions are checked when read.
func checkPrograms(st *config.Settings, bindings []subagent.Binding) error {
	for _, name := range slices.Sorted(maps.Keys(st.Agents)) {
		if err := programError(st.Agents[name].Command); err != nil {
			return st.Invalid("agents."+name, err)
		}
	}
	for i, b := range bindings {
		if b.Provider != acpprovider.Name {
			continue
		}
		if err := programError(b.Options[acpprovider.KeyCommand]); err != nil {
			return bindingError(st, i, b, err)
		}
	}
	return nil
}

// programError says why command cannot start, or nil when it can or when
// it cannot be known at start ("": a child dshd; a relative path).
func programError(command string) error {
	if command == "" || !filepath.IsAbs(command) && strings.ContainsRune(command, filepath.Separator) {
		return nil
	}
	_, err := exec.LookPath(command)
	var ee *exec.Error
	switch {
	case err == nil:
		return nil
	case errors.Is(err, exec.ErrNotFound):
		return fmt.Errorf("command %q: not found in PATH", command)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("command %q: no such file", command)
	case errors.As(err, &ee):
		if fi, serr := os.Stat(command); serr == nil && !fi.Mode().IsRegular() {
			return fmt.Errorf("command %q: not a program", command)
		}
		return fmt.Errorf("command %q: %w", command, ee.Err)
	}
	return fmt.Errorf("command %q: %w", command, err)
}

// SessionsDir is where the session journals live: <root>/sessions, root
// being --state-dir or $XDG_STATE_HOME/dshd.
func SessionsDir(root string) (string, error) {
	if root == "" {
		return session.DefaultDir()
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	return filepath.Join(abs, "sessions"), nil
}

// StateDirError is the configuration error for a state dir the store
// cannot open (a file, a directory dshd may not write): it names
// --state-dir and where its value came from, and the path that failed.
func StateDirError(st *config.Settings, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe
	}
	return st.Invalid("state-dir", err)
}

// backend is the model side of a daemon.
type backend struct {
	model   llm.Model
	modelID string
	keyEnv  string
	hasKey  func() bool
	// key is the key in use, "" without one.
	key     func() string
	catalog *catalog
}

// openBackend picks the model backend: the scripted model for
// "scripted[:FILE]", else an OpenAI-compatible server from the preset,
// URL, model and key settings. The key is the key variable's, else the
// one `dshd auth` stored (see key.go).
func openBackend(st *config.Settings, log *slog.Logger, lookupEnv func(string) (string, bool)) (*backend, error) {
	if scriptedModel(st) {
		var m *scripted.Model
		var err error
		if file, ok := strings.CutPrefix(st.Model, "scripted:"); ok && file != "" {
			m, err = scripted.Load(file)
		} else {
			m = scripted.Default()
		}
		if err != nil {
			return nil, st.Invalid("model", err)
		}
		infos, _ := m.Models(context.Background())
		id := "scripted"
		if len(infos) > 0 {
			id = infos[0].ID
		}
		return &backend{model: m, modelID: id, key: func() string { return "" }, catalog: staticCatalog(infos)}, nil
	}

	opts, keyEnv, err := modelOptions(st)
	if err != nil {
		return nil, err
	}
	opts.Logger = log
	client, err := openai.New(opts)
	if err != nil {
		return nil, err
	}
	b := &backend{model: client, modelID: client.DefaultModel(), keyEnv: keyEnv, key: func() string { return "" }}
	list := client.Models
	if keyEnv != "" {
		kc, err := newKeyedClient(opts, newKeySource(keyEnv, lookupEnv, log), log)
		if err != nil {
			return nil, err
		}
		b.model, b.hasKey, b.key, list = kc, kc.has, kc.key, kc.Models
	}
	b.catalog = &catalog{ready: make(chan struct{}), fetch: func(ctx context.Context) ([]llm.Info, error) {
		if b.hasKey != nil && !b.hasKey() {
			return nil, errors.New("no API key")
		}
		return list(ctx)
	}, log: log}
	return b, nil
}

// modelOptions are the client options of st's OpenAI-compatible server,
// without the key, and the variable the key comes from ("" for none).
func modelOptions(st *config.Settings) (openai.Options, string, error) {
	backendName := ""
	if st.IsSet("backend") {
		backendName = st.Backend
	}
	opts, keyEnv, err := openai.PresetFor(backendName, st.ModelURL)
	if err != nil {
		return opts, "", st.Invalid("backend", err)
	}
	if st.Model != "" {
		opts.DefaultModel = st.Model
	}
	if st.APIKeyEnvSet() {
		keyEnv = st.APIKeyEnv
	}
	switch {
	case keyEnv != "":
		// The keyed client says which (key.go).
	case opts.APIKey != "":
		opts.KeySource = "the " + presetName(st) + " backend's fixed key; --api-key-env names a variable holding another"
	case st.APIKeyEnvSet():
		opts.KeySource = `--api-key-env is ""`
	default:
		opts.KeySource = "the " + presetName(st) + " backend sends none unless --api-key-env names the variable holding one"
	}
	switch st.Thinking {
	case "off":
		opts.DisableThinking = true
	case "", "on":
	default:
		return opts, "", fmt.Errorf("thinking %q: want on or off", st.Thinking)
	}
	if st.IsSet("thinking") && !opts.SwitchesThinking() {
		// Accepted, it would change nothing: the request has no field
		// for it, and the session offers no thinking option.
		return opts, "", st.Invalid("thinking", fmt.Errorf("the %s backend has no thinking switch (only deepseek sends one); leave thinking unset", presetName(st)))
	}
	opts.FirstByteTimeout = st.ModelTimeout
	opts.FirstTokenTimeout = never(st.ModelFirstTokenTimeout)
	opts.IdleTimeout = never(st.ModelIdleTimeout)
	opts.CallTimeout = never(st.ModelCallTimeout)
	opts.MaxAnswerBytes = st.MaxModelAnswerBytes
	opts.Settings = openai.Settings{FirstByteTimeout: "--model-timeout", FirstTokenTimeout: "--model-first-token-timeout",
		IdleTimeout: "--model-idle-timeout", CallTimeout: "--model-call-timeout", MaxAnswerBytes: "--max-model-answer-bytes"}
	return opts, keyEnv, nil
}

// presetName is the name of st's backend preset (openai.PresetName).
func presetName(st *config.Settings) string {
	name := ""
	if st.IsSet("backend") {
		name = st.Backend
	}
	return openai.PresetName(name, st.ModelURL)
}

// never is a timeout setting as the model client takes it: the setting's
// 0, never, is the client's negative.
func never(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// catalog is the model list for the model selector. The first call starts
// a background fetch (GET /models) and returns what is known; it never
// delays a session.
type catalog struct {
	fetch func(context.Context) ([]llm.Info, error)
	// ready is closed when the fetch ended (nil for a static list).
	ready chan struct{}
	log   *slog.Logger
	once  sync.Once
	mu    sync.Mutex
	infos []llm.Info
}

func staticCatalog(infos []llm.Info) *catalog { return &catalog{infos: infos} }

// ids returns the ids of the models known so far.
func (c *catalog) ids() []string {
	var out []string
	for _, m := range c.list() {
		out = append(out, m.ID)
	}
	return out
}

func (c *catalog) list() []llm.Info {
	if c.fetch != nil {
		c.once.Do(func() {
			go func() {
				defer close(c.ready)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				infos, err := c.fetch(ctx)
				if err != nil {
					c.log.Debug("model list unavailable", "err", err)
					return
				}
				c.mu.Lock()
				c.infos = infos
				c.mu.Unlock()
			}()
		})
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.infos
}

// mcpLimits returns the MCP settings as tools/mcp options.
func mcpLimits(st *config.Settings) mcp.Options {
	return mcp.Options{
		StartTimeout:        st.MCPStartTimeout,
		CallTimeout:         never(st.MCPCallTimeout),
		MaxMessageBytes:     st.MCPMaxMessageBytes,
		MaxOutput:           st.MCPMaxOutputBytes,
		ProgressInterval:    st.MCPProgressInterval,
		MaxTools:            st.MCPMaxTools,
		MaxDescriptionBytes: st.MCPMaxToolDescriptionBytes,
		MaxSchemaBytes:      st.MCPMaxToolSchemaBytes,
		MaxSchemaDepth:      st.MCPMaxToolSchemaDepth,
		// What the model, the editor and the log are told names the flag.
		Settings: mcp.Settings{
			CallTimeout: "--mcp-call-timeout", MaxOutput: "--mcp-max-output-bytes", MaxMessageBytes: "--mcp-max-message-bytes",
			MaxTools: "--mcp-max-tools", MaxDescriptionBytes: "--mcp-max-tool-description-bytes", MaxSchemaBytes: "--mcp-max-tool-schema-bytes",
			MaxSchemaDepth: "--mcp-max-tool-schema-depth", ProgressInterval: "--mcp-progress-interval", Sandbox: "--mcp-sandbox",
		},
	}
}

// connectMCP adapts tools/mcp to the server's connector; limits holds
// the MCP settings.
func connectMCP(log *slog.Logger, sb *sandbox.Sandbox, limits mcp.Options) server.MCPConnector {
	return func(ctx context.Context, cwd string, dirs []string, servers []acp.McpServer, reg *tools.Registry) (func(), []string) {
		var cfgs []mcp.ServerConfig
		for _, s := range servers {
			switch s := s.(type) {
			case *acp.McpServerStdio:
				cfg := mcp.ServerConfig{Name: s.Name, Transport: mcp.TransportStdio, Command: s.Command, Args: s.Args}
				for _, e := range s.Env {
					cfg.Env = append(cfg.Env, mcp.EnvVar{Name: e.Name, Value: e.Value})
				}
				cfgs = append(cfgs, cfg)
			case *acp.McpServerHTTP:
				cfg := mcp.ServerConfig{Name: s.Name, Transport: mcp.TransportHTTP, URL: s.URL}
				for _, h := range s.Headers {
					cfg.Headers = append(cfg.Headers, mcp.Header{Name: h.Name, Value: h.Value})
				}
				cfgs = append(cfgs, cfg)
			case *acp.McpServerSSE:
				cfg := mcp.ServerConfig{Name: s.Name, Transport: mcp.TransportSSE, URL: s.URL}
				for _, h := range s.Headers {
					cfg.Headers = append(cfg.Headers, mcp.Header{Name: h.Name, Value: h.Value})
				}
				cfgs = append(cfgs, cfg)
			}
		}
		opts := limits
		opts.Cwd, opts.Roots, opts.Sandbox, opts.Logger = cwd, append([]string{cwd}, dirs...), sb, log
		set, warnings := mcp.Connect(ctx, cfgs, reg, &opts)
		var texts []string
		for _, w := range warnings {
			texts = append(texts, w.Error())
		}
		return func() { _ = set.Close() }, texts
	}
}
