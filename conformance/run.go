// This file runs cases: the target, options and results, the probe that
// learns who the agent is, and the scheduler that runs each case in its own
// temporary directory with its own agent processes.

package conformance

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"
)

//go:embed testdata/scripts/*.json testdata/cases/*.acp
var testdata embed.FS

// Target is the agent command under test. Each case starts it afresh.
type Target struct {
	Command string
	Args    []string
	// Env adds environment variables to the inherited environment.
	Env []string
	// Dir is the working directory of the agent processes (default: the
	// current directory).
	Dir string
}

// Options configure [Run]. The zero value runs every case.
type Options struct {
	// Cases, when set, runs only the cases whose ID or name matches.
	Cases *regexp.Regexp
	// Timeout bounds one case (default 30s); it is a watchdog, never an
	// assertion.
	Timeout time.Duration
	// Parallel is how many cases run at once (default 2×GOMAXPROCS).
	Parallel int
	// Dshd runs the dshd-only cases (scripted model scripts, dshd flags)
	// when the agent's initialize says its name is "dshd".
	Dshd bool
	// KnownFailures maps case IDs to a reason; those cases are skipped
	// with the reason.
	KnownFailures map[string]string
	// Transcripts keeps every case's transcripts in its Result.
	Transcripts bool
	// Schema, when set, validates every line the agent writes against the
	// official JSON schema; a message that does not validate is a
	// violation of its item (and of acp-v1#76 for keys the schema does not
	// define). Without it the schema cases are skipped.
	Schema *SchemaSet
	// TempDir is where case directories are made (default os.TempDir()).
	TempDir string
	// Logger receives progress at debug level; nil discards.
	Logger *slog.Logger
}

// Status is a case's outcome.
type Status string

// Outcomes.
const (
	Pass Status = "pass"
	Fail Status = "fail"
	Skip Status = "skip"
	// Advice is a check of dshd's own documented policy (an item marked
	// policy in the checklist) or a use of a draft feature: worth knowing,
	// but the protocol does not require it, so it never fails a run.
	Advice Status = "advice"
)

// Failed reports whether any result failed; advice and skips do not count.
// It is what the exit status of `dshd conformance` follows.
func Failed(results []Result) bool {
	for _, r := range results {
		if r.Status == Fail {
			return true
		}
	}
	return false
}

// Result is the outcome of one case.
type Result struct {
	ID    string
	Name  string
	Items []string
	// Status is the outcome: fail when the case's own checks failed or
	// its traffic broke a rule anywhere.
	Status Status
	// Verdict is what the case's own checks found about its Items (pass,
	// fail, advice, skip), before the rules its traffic broke elsewhere;
	// "" means the same as Status.
	Verdict Status
	Detail  string
	// Violations are the rules the case's traffic broke; their items
	// fail in the table too.
	Violations []Violation
	Duration   time.Duration
	// Transcripts holds one transcript per agent process the case ran,
	// when Options.Transcripts is set.
	Transcripts [][]*Line
}

// Case is one conformance case.
type Case struct {
	// ID names the case ("cancel/mid-stream").
	ID string
	// Name says what it checks, as a sentence.
	Name string
	// Items are the checklist items it covers ("acp-v1#41").
	Items []string
	// Needs are agent capabilities the case requires, as paths inside
	// agentCapabilities ("loadSession", "sessionCapabilities.list"); an
	// agent that does not advertise one skips the case.
	Needs []string
	// Dshd marks cases that drive dshd's scripted model or flags; they
	// run only against dshd.
	Dshd bool
	// Heavy cases (huge lines) run one at a time.
	Heavy bool
	// Run performs the case.
	Run func(t *T)
}

// AgentInfo is what the probe learned from the agent's initialize.
type AgentInfo struct {
	Name, Version string
	// Capabilities is the raw agentCapabilities object.
	Capabilities json.RawMessage
	// Result is the raw initialize result.
	Result json.RawMessage
}

// Has reports whether the agent advertises the capability at path
// (dot-separated, inside agentCapabilities).
func (a *AgentInfo) Has(path string) bool {
	return truthy(get(a.Capabilities, strings.Split(path, ".")...))
}

// Cases returns every case: the Go cases and the data cases under
// testdata/cases. A data file that does not parse becomes a case that
// fails with the reason.
func Cases() []*Case {
	all := goCases()
	all = append(all, dataCases()...)
	slices.SortStableFunc(all, func(a, b *Case) int { return strings.Compare(a.ID, b.ID) })
	return all
}

type runner struct {
	target    Target
	opts      Options
	info      *AgentInfo
	dshd      bool
	scriptDir string
	log       *slog.Logger
	heavy     sync.Mutex
	found     findings
}

// Run runs the cases against target and returns one Result per case, in
// case order, followed by one "findings/ITEM" result per checklist item
// with findings reported once for the whole run (see findings.go). When
// the agent cannot be initialized, the first result is "init/probe" with
// the exchange. It never writes to stdout.
func Run(ctx context.Context, target Target, opts *Options) []Result {
	r := &runner{target: target}
	if opts != nil {
		r.opts = *opts
	}
	if r.opts.Timeout <= 0 {
		r.opts.Timeout = 30 * time.Second
	}
	if r.opts.Parallel <= 0 {
		r.opts.Parallel = 2 * runtime.GOMAXPROCS(0)
	}
	r.log = r.opts.Logger
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	if r.target.Dir == "" {
		r.target.Dir, _ = os.Getwd()
	}
	if p, err := exec.LookPath(r.target.Command); err == nil && strings.ContainsRune(r.target.Command, filepath.Separator) {
		if abs, err := filepath.Abs(p); err == nil {
			r.target.Command = abs
		}
	}

	var cases []*Case
	for _, c := range Cases() {
		if r.opts.Cases == nil || r.opts.Cases.MatchString(c.ID) || r.opts.Cases.MatchString(c.Name) {
			cases = append(cases, c)
		}
	}
	results := make([]Result, len(cases))

	info, err := r.probe(ctx)
	if err != nil {
		for i, c := range cases {
			results[i] = Result{ID: c.ID, Name: c.Name, Items: c.Items, Status: Fail, Detail: "not run: the agent could not be initialized (see init/probe)"}
		}
		probe := Result{ID: "init/probe", Name: "the agent starts and answers initialize", Items: []string{"acp-v1#13"}, Status: Fail, Detail: "initialize failed: " + err.Error()}
		return append([]Result{probe}, results...)
	}
	r.info = info
	r.dshd = r.opts.Dshd && info.Name == "dshd"
	if r.dshd {
		dir, err := os.MkdirTemp(r.opts.TempDir, "acp-scripts-")
		if err == nil {
			defer os.RemoveAll(dir)
			err = writeScripts(dir)
		}
		if err != nil {
			r.dshd = false
			r.log.Warn("dshd scripts unavailable", "err", err)
		}
		r.scriptDir = dir
	}

	sem := make(chan struct{}, r.opts.Parallel)
	var wg sync.WaitGroup
	for i, c := range cases {
		if why := r.skipReason(c); why != "" {
			results[i] = Result{ID: c.ID, Name: c.Name, Items: c.Items, Status: Skip, Detail: why}
			continue
		}
		wg.Go(func() {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				results[i] = Result{ID: c.ID, Name: c.Name, Items: c.Items, Status: Fail, Detail: "not run: " + ctx.Err().Error()}
				return
			}
			defer func() { <-sem }()
			if c.Heavy {
				r.heavy.Lock()
				defer r.heavy.Unlock()
			}
			results[i] = r.runCase(ctx, c)
			r.log.Debug("case done", "case", c.ID, "status", results[i].Status, "took", results[i].Duration)
		})
	}
	wg.Wait()
	return append(results, r.found.results()...)
}

func (r *runner) skipReason(c *Case) string {
	if why, ok := r.opts.KnownFailures[c.ID]; ok {
		return "known failure: " + why
	}
	if c.Dshd && !r.dshd {
		return "needs dshd (its scripted model drives tools and subagents)"
	}
	for _, n := range c.Needs {
		if !r.info.Has(n) {
			return "the agent does not advertise " + n
		}
	}
	return ""
}

func writeScripts(dir string) error {
	return fs.WalkDir(testdata, "testdata/scripts", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := testdata.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, filepath.Base(p)), b, 0o644)
	})
}

// probe starts the agent once and initializes it. What its traffic breaks
// becomes a finding of the run; when initialize fails, the error carries
// the exchange.
func (r *runner) probe(ctx context.Context) (*AgentInfo, error) {
	argv := append([]string{r.target.Command}, r.target.Args...)
	c, err := startClient(0, argv, r.target.Dir, r.target.Env, ClientOptions{})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	var res json.RawMessage
	err = c.Do(ctx, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}, "clientInfo": clientInfo}, &res)
	c.Shutdown(3 * time.Second)
	if err != nil {
		return nil, fmt.Errorf("%w\n%s", err, processDetail(c, nil))
	}
	r.collect(c, "init/probe")
	return &AgentInfo{
		Name:         getString(res, "agentInfo", "name"),
		Version:      getString(res, "agentInfo", "version"),
		Capabilities: get(res, "agentCapabilities"),
		Result:       res,
	}, nil
}

var clientInfo = map[string]string{"name": "dshd-conformance", "version": "1"}

// collect returns what one finished process's traffic broke, each
// violation annotated with its exchange; findings of the run (setup
// results, advice) go to the run's list instead.
func (r *runner) collect(cl *Client, caseID string) []Violation {
	lines := cl.Lines()
	vs := cl.violations()
	if r.opts.Schema != nil {
		sv, _ := r.opts.Schema.Check(lines)
		vs = append(vs, sv...)
	}
	var own []Violation
	for _, v := range vs {
		annotate(&v, lines, cl.index)
		if v.Advice || v.isSetup() {
			r.found.add(v, caseID)
			continue
		}
		own = append(own, v)
	}
	return own
}

// policyItems are the checklist items that check dshd's own documented
// choices rather than the protocol.
var policyItems = sync.OnceValue(func() map[string]bool {
	out := map[string]bool{}
	for _, it := range Checklist() {
		if strings.Contains(it.Level, "policy") {
			out[it.ID] = true
		}
	}
	return out
})

// policy reports whether every item the case covers is a policy item:
// what it finds is advice, not a failure.
func (c *Case) policy() bool {
	for _, it := range c.Items {
		if !policyItems()[it] {
			return false
		}
	}
	return len(c.Items) > 0
}

func (r *runner) runCase(ctx context.Context, c *Case) Result {
	start := time.Now()
	res := Result{ID: c.ID, Name: c.Name, Items: c.Items}
	dir, err := os.MkdirTemp(r.opts.TempDir, "acp-case-")
	if err == nil {
		dir, err = filepath.EvalSymlinks(dir)
	}
	if err != nil {
		res.Status, res.Detail = Fail, err.Error()
		return res
	}
	defer os.RemoveAll(dir)
	cwd := filepath.Join(dir, "work")
	if err := os.Mkdir(cwd, 0o755); err != nil {
		res.Status, res.Detail = Fail, err.Error()
		return res
	}
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	t := &T{ctx: ctx, r: r, c: c, Dir: dir, Cwd: cwd, status: Pass, points: map[int][]int{}}
	stop := context.AfterFunc(ctx, t.killAll)
	defer stop()

	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if p := recover(); p != nil {
				t.mark(Fail, fmt.Sprintf("panic: %v\n%s", p, debug.Stack()))
			}
		}()
		c.Run(t)
	}()
	<-done
	if ctx.Err() != nil && t.status == Pass {
		t.mark(Fail, "the case timed out")
	}
	for _, f := range slices.Backward(t.cleanups) {
		f()
	}

	t.mu.Lock()
	clients := slices.Clone(t.clients)
	t.mu.Unlock()
	for _, cl := range clients {
		cl.Shutdown(5 * time.Second)
		if t.status != Skip {
			res.Violations = append(res.Violations, r.collect(cl, c.ID)...)
		}
	}
	res.Verdict = t.status
	if res.Verdict == Fail && c.policy() {
		res.Verdict = Advice
	}
	res.Status = res.Verdict
	if len(res.Violations) > 0 {
		res.Status = Fail
	}
	details := slices.Clone(t.msgs)
	points := map[int][]int{}
	for i, pts := range t.points {
		points[i] = slices.Clone(pts)
	}
	for _, v := range res.Violations {
		details = append(details, "violation "+v.String()+"\n"+strings.TrimRight(v.exchange, "\n"))
	}
	if res.Status == Fail || res.Status == Advice {
		for _, v := range res.Violations {
			// The exchange of a violation is shown with it; the excerpt
			// shows what led to it.
			points[v.process] = append(points[v.process], v.Seq)
		}
		for _, cl := range clients {
			details = append(details, processDetail(cl, points[cl.index]))
		}
	}
	if r.opts.Transcripts {
		for _, cl := range clients {
			res.Transcripts = append(res.Transcripts, cl.Lines())
		}
	}
	res.Detail = strings.Join(details, "\n")
	res.Duration = time.Since(start)
	return res
}

// processDetail renders one agent process for a failure: its exit state,
// the lines around the points of interest, and its stderr tail.
func processDetail(cl *Client, points []int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "agent process %d (%s), sent (>>) and received (<<):\n%s", cl.index, cl.exitState(), excerpt(cl.Lines(), points))
	tail := strings.TrimSpace(cl.Stderr())
	if i := strings.Index(tail, "panic:"); i >= 0 {
		b.WriteString("  the agent panicked: " + clip(tail[i:], 6000))
	} else if tail != "" {
		b.WriteString("  stderr tail: " + clip(lastLines(tail, 8), 1500))
	}
	return strings.TrimRight(b.String(), "\n")
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// T is a running case: its context, its directories, and the agent
// processes it started.
type T struct {
	ctx context.Context
	r   *runner
	c   *Case
	// Dir is the case's private temporary directory.
	Dir string
	// Cwd is Dir/work, an empty directory for session cwds.
	Cwd string

	mu       sync.Mutex
	status   Status
	msgs     []string
	clients  []*Client
	cleanups []func()
	// points are, per agent process, the last line on record when a
	// failure was recorded: the failure details show what led to it.
	points map[int][]int
}

// Context is the case's context; it ends at the case's timeout.
func (t *T) Context() context.Context { return t.ctx }

// Agent is what the probe learned about the agent.
func (t *T) Agent() *AgentInfo { return t.r.info }

// Schema is the schema set of the run, or nil.
func (t *T) Schema() *SchemaSet { return t.r.opts.Schema }

// IsDshd reports whether the target is dshd and dshd-only behaviour may be
// asserted.
func (t *T) IsDshd() bool { return t.r.dshd }

// Cleanup registers f to run after the case, before its processes are
// shut down.
func (t *T) Cleanup(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cleanups = append(t.cleanups, f)
}

func (t *T) mark(s Status, msg string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s == Fail || t.status == Pass {
		t.status = s
	}
	if s == Fail {
		for _, c := range t.clients {
			if n := c.Seq(); n > 0 {
				t.points[c.index] = append(t.points[c.index], n-1)
			}
		}
	}
	if msg != "" {
		t.msgs = append(t.msgs, msg)
	}
}

// Errorf records a failure and goes on.
func (t *T) Errorf(format string, args ...any) { t.mark(Fail, fmt.Sprintf(format, args...)) }

// Fatalf records a failure and ends the case; call it only from the case's
// goroutine.
func (t *T) Fatalf(format string, args ...any) {
	t.mark(Fail, fmt.Sprintf(format, args...))
	runtime.Goexit()
}

// Skipf marks the case skipped and ends it; call it only from the case's
// goroutine.
func (t *T) Skipf(format string, args ...any) {
	t.mark(Skip, fmt.Sprintf(format, args...))
	runtime.Goexit()
}

// Logf adds a note to the result's detail.
func (t *T) Logf(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.msgs = append(t.msgs, fmt.Sprintf(format, args...))
}

func (t *T) killAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range t.clients {
		c.Kill()
	}
}

// hasModelFlag reports whether args choose dshd's model.
func hasModelFlag(args []string) bool {
	for _, a := range args {
		if a == "--model" || strings.HasPrefix(a, "--model=") {
			return true
		}
	}
	return false
}

// Start launches a new agent process for the case. dshd gets the case's
// state directory, so processes of one case share sessions; Script and
// Args are for dshd-only cases.
func (t *T) Start(o *ClientOptions) *Client {
	var opts ClientOptions
	if o != nil {
		opts = *o
	}
	argv := append([]string{t.r.target.Command}, t.r.target.Args...)
	if t.r.dshd {
		argv = append(argv, "--state-dir", filepath.Join(t.Dir, "state"))
		switch {
		case opts.Script != "":
			argv = append(argv, "--model", "scripted:"+filepath.Join(t.r.scriptDir, opts.Script))
		case !hasModelFlag(t.r.target.Args):
			// The suite checks the protocol, not a model backend: without a
			// model of its own, dshd runs on its offline model, so a
			// machine without an API key can run `dshd conformance -- dshd`.
			argv = append(argv, "--model", "scripted")
		}
		argv = append(argv, opts.Args...)
	} else if opts.Script != "" || len(opts.Args) > 0 {
		t.Fatalf("case error: a script or dshd arguments in a case not marked Dshd")
	}
	dir := opts.Dir
	if dir == "" {
		dir = t.r.target.Dir
	}
	t.mu.Lock()
	index := len(t.clients)
	t.mu.Unlock()
	c, err := startClient(index, argv, dir, append(slices.Clone(t.r.target.Env), opts.Env...), opts)
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.mu.Lock()
	t.clients = append(t.clients, c)
	t.mu.Unlock()
	if t.ctx.Err() != nil {
		c.Kill()
	}
	return c
}
