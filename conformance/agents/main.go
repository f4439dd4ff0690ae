// This file runs each agent against the suite on its own fake model
// server and prints the rows.

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/dshd/dshd/conformance"
	"github.com/dshd/dshd/conformance/agents/fakemodel"
)

// agent is one row: how to run it against the fake model server.
type agent struct {
	name string
	// pkg is the npm package whose package.json holds the version ("" for
	// dshd).
	pkg string
	// setup writes the agent's configuration into home and returns its
	// command line and environment.
	setup func(e *env) (argv, environ []string, err error)
	// dshd runs the dshd-only cases (dshd's scripted model drives them).
	dshd bool
}

// env is what an agent's setup works with.
type env struct {
	modules string // node_modules of the pinned agents
	home    string // the agent's private HOME
	model   string // the fake model server's base URL
	dshd    string // the dshd binary
}

func (e *env) bin(name string) string { return filepath.Join(e.modules, ".bin", name) }

// baseEnv isolates an agent from the user's configuration.
func (e *env) baseEnv() []string {
	return []string{
		"HOME=" + e.home,
		"XDG_CONFIG_HOME=" + filepath.Join(e.home, ".config"),
		"XDG_STATE_HOME=" + filepath.Join(e.home, ".local", "state"),
		"XDG_DATA_HOME=" + filepath.Join(e.home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(e.home, ".cache"),
	}
}

func write(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o600)
}

var agents = []agent{
	{
		name: "dshd",
		dshd: true,
		setup: func(e *env) ([]string, []string, error) {
			// The suite drives dshd with its scripted model (the dshd-only
			// cases need it); the fake server is for the others.
			return []string{e.dshd}, e.baseEnv(), nil
		},
	},
	{
		name: "codex-acp",
		pkg:  "@zed-industries/codex-acp",
		setup: func(e *env) ([]string, []string, error) {
			// A model provider of its own: codex-acp asks for a login only
			// for the built-in "openai" provider. wire_api "responses" is
			// the OpenAI Responses API.
			codexHome := filepath.Join(e.home, ".codex")
			cfg := fmt.Sprintf(`model = "fake-model"
model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake model server"
base_url = %q
env_key = "FAKE_MODEL_API_KEY"
wire_api = "responses"
`, e.model+"/v1")
			if err := write(filepath.Join(codexHome, "config.toml"), cfg); err != nil {
				return nil, nil, err
			}
			return []string{e.bin("codex-acp")}, append(e.baseEnv(), "CODEX_HOME="+codexHome, "FAKE_MODEL_API_KEY=fake-key"), nil
		},
	},
	{
		name: "claude-agent-acp",
		pkg:  "@zed-industries/claude-agent-acp",
		setup: func(e *env) ([]string, []string, error) {
			environ := append(e.baseEnv(),
				"ANTHROPIC_BASE_URL="+e.model,
				"ANTHROPIC_API_KEY=fake-key",
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
				"DISABLE_AUTOUPDATER=1",
				// Claude Code refuses its permission-bypass flag, which
				// claude-agent-acp passes, under root unless told it runs
				// in a sandbox; CI containers run as root.
				"IS_SANDBOX=1",
			)
			return []string{e.bin("claude-agent-acp")}, environ, nil
		},
	},
	{
		name: "gemini-cli",
		pkg:  "@google/gemini-cli",
		setup: func(e *env) ([]string, []string, error) {
			settings := `{"privacy": {"usageStatisticsEnabled": false}, "telemetry": {"enabled": false}}`
			if err := write(filepath.Join(e.home, ".gemini", "settings.json"), settings); err != nil {
				return nil, nil, err
			}
			// GOOGLE_GEMINI_BASE_URL with a key selects gemini-cli's
			// "gateway" auth, which needs no login. The case directories
			// are throwaway workspaces, trusted as an editor user trusts
			// their project (else set_mode refuses every approval mode).
			environ := append(e.baseEnv(), "GOOGLE_GEMINI_BASE_URL="+e.model, "GEMINI_API_KEY=fake-key", "GEMINI_CLI_TRUST_WORKSPACE=true")
			return []string{e.bin("gemini"), "--acp"}, environ, nil
		},
	},
	{
		name: "sdk-example-agent",
		pkg:  "@agentclientprotocol/sdk",
		setup: func(e *env) ([]string, []string, error) {
			// The example agent ships in the package's dist/examples up to
			// 1.9.0 (2.x leaves it out); it needs no model.
			return []string{"node", filepath.Join(e.modules, "@agentclientprotocol", "sdk", "dist", "examples", "agent.js")}, e.baseEnv(), nil
		},
	},
}

// row is one agent's outcome.
type row struct {
	name, version   string
	items, cases    map[conformance.Status]int
	modelRequests   int
	took            time.Duration
	err             error
	initializeError bool
}

func main() {
	var (
		dshd     = flag.String("dshd", "bin/dshd", "the dshd binary (its row uses dshd's scripted model)")
		modules  = flag.String("modules", "", "node_modules of the pinned agents (default: next to this package's package.json)")
		out      = flag.String("out", ".conformance-agents", "directory for each agent's full table and details")
		only     = flag.String("only", "", "comma-separated agent names to run (default: all)")
		cases    = flag.String("case", "", "run only the cases whose id or name matches this regexp")
		timeout  = flag.Duration("timeout", 60*time.Second, "watchdog for one case")
		parallel = flag.Int("parallel", 2, "cases run at once per agent (the node agents are heavy)")
		markdown = flag.Bool("markdown", false, "also print the table as Markdown")
	)
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, log, options{dshd: *dshd, modules: *modules, out: *out, only: *only, cases: *cases, timeout: *timeout, parallel: *parallel, markdown: *markdown}); err != nil {
		fmt.Fprintln(os.Stderr, "conformance-agents:", err)
		os.Exit(2)
	}
}

type options struct {
	dshd, modules, out, only, cases string
	timeout                         time.Duration
	parallel                        int
	markdown                        bool
}

func run(ctx context.Context, log *slog.Logger, o options) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	if o.modules == "" {
		o.modules = filepath.Join(root, "conformance", "agents", "node_modules")
	}
	if _, err := os.Stat(filepath.Join(o.modules, ".bin")); err != nil {
		return fmt.Errorf("the agents are not installed in %s (run npm ci in conformance/agents, as make conformance-agents does)", o.modules)
	}
	if o.dshd, err = filepath.Abs(o.dshd); err != nil {
		return err
	}
	schemaDir, err := conformance.FindSchemaDir(root)
	if err != nil {
		return err
	}
	schema, err := conformance.LoadSchemas(schemaDir)
	if err != nil {
		return err
	}
	var re *regexp.Regexp
	if o.cases != "" {
		if re, err = regexp.Compile(o.cases); err != nil {
			return fmt.Errorf("-case: %w", err)
		}
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	var rows []row
	for _, a := range agents {
		if o.only != "" && !contains(strings.Split(o.only, ","), a.name) {
			continue
		}
		if ctx.Err() != nil {
			break
		}
		log.Info("running the suite", "agent", a.name)
		r := runAgent(ctx, log, a, &env{modules: o.modules, dshd: o.dshd}, &conformance.Options{
			Cases: re, Timeout: o.timeout, Parallel: o.parallel, Dshd: a.dshd, Schema: schema,
		}, filepath.Join(o.out, a.name+".txt"))
		if r.err != nil {
			log.Error("agent failed to run", "agent", a.name, "err", r.err)
		}
		rows = append(rows, r)
	}
	writeRows(os.Stdout, rows)
	if o.markdown {
		fmt.Println()
		writeMarkdown(os.Stdout, rows)
	}
	fmt.Printf("\nfull tables and details: %s/NAME.txt\n", o.out)
	return nil
}

func runAgent(ctx context.Context, log *slog.Logger, a agent, e *env, opts *conformance.Options, report string) row {
	r := row{name: a.name, version: version(e, a)}
	start := time.Now()
	defer func() { r.took = time.Since(start) }()
	home, err := os.MkdirTemp("", "conformance-agent-home-")
	if err != nil {
		r.err = err
		return r
	}
	defer os.RemoveAll(home)
	e.home = home
	srv, err := fakemodel.Start(log.With("agent", a.name))
	if err != nil {
		r.err = err
		return r
	}
	defer srv.Close()
	e.model = srv.URL()
	argv, environ, err := a.setup(e)
	if err != nil {
		r.err = err
		return r
	}
	work := filepath.Join(home, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		r.err = err
		return r
	}
	results := conformance.Run(ctx, conformance.Target{Command: argv[0], Args: argv[1:], Env: environ, Dir: work}, opts)
	r.modelRequests = srv.Total()
	r.cases = conformance.CountCases(results)
	r.items = map[conformance.Status]int{}
	for _, ir := range conformance.Aggregate(results) {
		r.items[ir.Status]++
	}
	r.initializeError = len(results) > 0 && results[0].ID == "init/probe"
	if r.version == "" && a.pkg == "" {
		r.version = dshdVersion(ctx, e.dshd)
	}
	r.took = time.Since(start)
	r.err = errors.Join(r.err, writeReport(report, a, r, argv, srv.Counts(), results))
	return r
}

func writeReport(path string, a agent, r row, argv []string, counts map[fakemodel.API]int, results []conformance.Result) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintf(f, "agent: %s %s\ncommand: %s\nmodel requests: %v\ntook: %s\n\n", a.name, r.version, strings.Join(argv, " "), counts, r.took.Round(time.Second))
	if err := conformance.WriteTable(f, results); err != nil {
		return err
	}
	fmt.Fprintln(f)
	return conformance.WriteDetails(f, results, true)
}

// version reads the pinned package's version from its package.json.
func version(e *env, a agent) string {
	if a.pkg == "" {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(e.modules, filepath.FromSlash(a.pkg), "package.json"))
	if err != nil {
		return "?"
	}
	var p struct{ Version string }
	_ = json.Unmarshal(b, &p)
	return p.Version
}

func dshdVersion(ctx context.Context, bin string) string {
	out, err := commandOutput(ctx, bin, "version")
	if err != nil {
		return "?"
	}
	f := strings.Fields(out)
	if len(f) >= 2 {
		return f[1]
	}
	return strings.TrimSpace(out)
}

func writeRows(w io.Writer, rows []row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "AGENT\tVERSION\tITEMS pass/fail/advice/skip\tCASES pass/fail/advice/skip\tMODEL REQUESTS\tTOOK")
	for _, r := range rows {
		if r.err != nil && r.cases == nil {
			fmt.Fprintf(tw, "%s\t%s\tnot run: %v\t\t\t\n", r.name, r.version, r.err)
			continue
		}
		note := ""
		if r.initializeError {
			note = " (initialize failed)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s%s\t%d\t%s\n", r.name, r.version, counts(r.items), counts(r.cases), note, r.modelRequests, r.took.Round(time.Second))
	}
	_ = tw.Flush()
}

func writeMarkdown(w io.Writer, rows []row) {
	fmt.Fprintln(w, "| agent | version | items pass / fail / advice / skip | cases pass / fail / advice / skip | model requests |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %d |\n", r.name, r.version, strings.ReplaceAll(counts(r.items), "/", " / "), strings.ReplaceAll(counts(r.cases), "/", " / "), r.modelRequests)
	}
}

func counts(m map[conformance.Status]int) string {
	return fmt.Sprintf("%d/%d/%d/%d", m[conformance.Pass], m[conformance.Fail], m[conformance.Advice], m[conformance.Skip])
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if strings.TrimSpace(x) == s {
			return true
		}
	}
	return false
}

// repoRoot finds the module root (go.mod) from the working directory up.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("run from inside the dshd repository (no go.mod above " + dir + ")")
		}
	}
}

func commandOutput(ctx context.Context, name string, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, name, args...).Output()
	return string(out), err
}
