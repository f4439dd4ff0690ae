// This file implements the run_command tool.

package builtin

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dshd/dshd/internal/settingnames"
	"github.com/dshd/dshd/internal/utf8cut"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/internal/choice"
	"github.com/dshd/dshd/tools/localrun"
	"github.com/dshd/dshd/tools/tasks"
)

// RunCommandName is the run_command tool's name.
const RunCommandName = "run_command"

// RunCommandParams are run_command's arguments.
type RunCommandParams struct {
	Command string `json:"command" jsonschema:"The shell command line to run"`
	Cwd     string `json:"cwd,omitempty" jsonschema:"The directory to run in (default: the working directory)"`
	Timeout int    `json:"timeout,omitempty" jsonschema:"Timeout in seconds"`
	// Background starts the command as a task of the session.
	Background bool `json:"background,omitempty" jsonschema:"Run it in the background: the call returns at once with a task id and the first output, and the command keeps running"`
}

// RunCommandOptions configures run_command; the zero value is usable.
type RunCommandOptions struct {
	// DefaultTimeout applies when a call gives none; 0 means 2 minutes.
	DefaultTimeout time.Duration
	// MaxTimeout caps a call's timeout; 0 means 10 minutes.
	MaxTimeout time.Duration
	// OutputLimit is the number of output bytes (the tail) kept and
	// returned; 0 means 30000. An editor's terminal is asked to keep no
	// more, and what it sends beyond is cut all the same.
	OutputLimit int
	// Settings name the limits where a runner logs a cut (the daemon's
	// flags).
	Settings RunCommandSettings
	// ProgressInterval is the least time between two progress reports of
	// a command's output; 0 means 250 ms. The first output is reported at
	// once.
	ProgressInterval time.Duration
	// FirstOutputWait is the longest a background call waits for the
	// command's first output before it returns; 0 means 500 ms.
	FirstOutputWait time.Duration
}

// RunCommandSettings name the limits of [RunCommandOptions] in the logs
// of their hits, one field for each limit of the same name; an empty
// field is that name.
type RunCommandSettings struct{ OutputLimit string }

//go:embed runcommand.md
var runCommandDescription string

type runCommand struct {
	tools.Typed[RunCommandParams]
	opts RunCommandOptions
	// set is the session's tasks, once the tool is bound to them; nil
	// runs no command in the background.
	set *tasks.Set
}

// NewRunCommand returns the run_command tool; opts may be nil.
func NewRunCommand(opts *RunCommandOptions) tools.Tool {
	t := &runCommand{opts: optionsOf(opts)}
	t.opts.DefaultTimeout = choice.PositiveOr(t.opts.DefaultTimeout, 2*time.Minute)
	t.opts.MaxTimeout = choice.PositiveOr(t.opts.MaxTimeout, 10*time.Minute)
	t.opts.DefaultTimeout = min(t.opts.DefaultTimeout, t.opts.MaxTimeout)
	t.opts.OutputLimit = choice.PositiveOr(t.opts.OutputLimit, 30000)
	t.opts.ProgressInterval = choice.PositiveOr(t.opts.ProgressInterval, 250*time.Millisecond)
	t.opts.FirstOutputWait = choice.PositiveOr(t.opts.FirstOutputWait, 500*time.Millisecond)
	settingnames.Fill(&t.opts.Settings)
	desc := strings.NewReplacer(
		"{{default}}", strconv.Itoa(int(t.opts.DefaultTimeout/time.Second)),
		"{{max}}", strconv.Itoa(int(t.opts.MaxTimeout/time.Second)),
		"{{output}}", strconv.Itoa(t.opts.OutputLimit),
	).Replace(runCommandDescription)
	// The title is the command line itself.
	t.Typed = tools.NewTyped(tools.Static{ToolName: RunCommandName, ToolDescription: desc, ToolKind: tools.KindExecute,
		ToolTitle: argTitle("command", "", "Run command")}, t.run)
	return t
}

var defaultRunner = localrun.New(nil)

// BindTasks returns run_command as it runs in the session whose tasks are
// set: with background commands. It shares t's static half, whose schema
// is built once.
func (t *runCommand) BindTasks(set *tasks.Set) tools.Tool {
	b := &runCommand{opts: t.opts, set: set}
	b.Typed = tools.NewTyped(t.Static, b.run)
	return b
}

func (t *runCommand) run(ctx context.Context, call *tools.Call, p RunCommandParams) (*tools.Result, error) {
	if strings.TrimSpace(p.Command) == "" {
		return tools.Errorf("command is required"), nil
	}
	if p.Timeout < 0 {
		return tools.Errorf("timeout must not be negative"), nil
	}
	if p.Background && t.set == nil {
		return tools.Errorf("this agent cannot run commands in the background; run it without background"), nil
	}
	env, dir, res := dirOf(call, p.Cwd)
	if res != nil {
		return res, nil
	}
	timeout := t.opts.DefaultTimeout
	if p.Background {
		timeout = 0 // a server or a watcher runs until it is stopped
	}
	if p.Timeout > 0 {
		timeout = min(time.Duration(p.Timeout)*time.Second, t.opts.MaxTimeout)
	}
	runner := env.Runner
	if runner == nil {
		runner = defaultRunner
	}
	cmd := tools.Command{Command: p.Command, Dir: dir, Roots: env.Workspace.Roots(), Timeout: timeout,
		OutputLimit: t.opts.OutputLimit, OutputLimitSetting: t.opts.Settings.OutputLimit}
	// The question shows every line, the cwd and the sandbox.
	q, err := tools.AskCommand(runner, cmd)
	if err != nil {
		return tools.Errorf("cannot run the command: %v", err), nil
	}
	if res, err := permit(ctx, call, tools.PermissionRequest{
		ToolName: t.ToolName, Title: q.Title, Kind: tools.KindExecute, Effect: tools.EffectExecute,
		Content: q.Content,
	}); res != nil || err != nil {
		return res, err
	}
	if p.Background {
		return t.background(ctx, t.set, runner, cmd)
	}

	prog := &progress{report: call.Report, interval: t.opts.ProgressInterval}
	result, err := runner.Run(ctx, cmd, prog.started, prog.output)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return tools.Errorf("cannot run the command: %v", err), nil
	}
	status, isErr := exitStatus(result, timeout)

	var b strings.Builder
	if result.Truncated {
		fmt.Fprintf(&b, "[output truncated: showing the last %d bytes]\n", len(result.Output))
	}
	b.WriteString(result.Output)
	if result.Output != "" && !strings.HasSuffix(result.Output, "\n") {
		b.WriteByte('\n')
	}
	if result.Output == "" {
		b.WriteString("(no output)\n")
	}
	b.WriteString("[" + status + "]\n")

	shown := tools.Fence(result.Output, "console") + "\n" + status
	content := []tools.Content{tools.TextContent(shown)}
	if id := prog.terminal(); id != "" {
		content = []tools.Content{{Type: tools.ContentTerminal, TerminalID: id, Text: shown}}
	}
	return &tools.Result{
		Output:  b.String(),
		IsError: isErr,
		Content: content,
		RawOutput: map[string]any{
			"exitCode":  result.ExitCode,
			"signal":    result.Signal,
			"timedOut":  result.TimedOut,
			"truncated": result.Truncated,
		},
	}, nil
}

// exitStatus words how a command ended, and whether that is a failure.
func exitStatus(result tools.CommandResult, timeout time.Duration) (status string, failed bool) {
	switch {
	case result.TimedOut:
		return fmt.Sprintf("timed out after %s; the command and its children were stopped", timeout), true
	case result.Signal != "":
		return "killed by " + result.Signal, true
	case result.ExitCode != nil && *result.ExitCode == 0:
		return "exit code 0", false
	case result.ExitCode != nil:
		return "exit code " + strconv.Itoa(*result.ExitCode), true
	}
	return "exit status unknown", true
}

// progress publishes a running command: its terminal when the runner has
// one, otherwise the tail of its output, at most once per interval.
type progress struct {
	report   tools.Reporter
	interval time.Duration

	mu         sync.Mutex
	terminalID string    // guarded by mu
	tail       []byte    // the last progressTail bytes of output; guarded by mu
	last       time.Time // guarded by mu
}

func (p *progress) started(id string) {
	p.mu.Lock()
	p.terminalID = id
	p.mu.Unlock()
	if id != "" {
		p.report.Update(tools.Progress{Content: []tools.Content{{Type: tools.ContentTerminal, TerminalID: id}}})
	}
}

func (p *progress) output(chunk string) {
	p.mu.Lock()
	if p.terminalID != "" {
		p.mu.Unlock()
		return
	}
	p.keep(chunk)
	now := time.Now()
	if !p.last.IsZero() && now.Sub(p.last) < p.interval {
		p.mu.Unlock()
		return
	}
	p.last = now
	text := string(utf8cut.TrimPartial(p.tail))
	p.mu.Unlock()
	p.report.Update(tools.Progress{Content: []tools.Content{tools.TextContent(tools.Fence(text, "console"))}})
}

// progressTail is how much of a command's output its progress shows.
const progressTail = 8 << 10

// keep appends chunk to the tail and drops what falls out of it; the
// front may then start inside a character, which output trims.
func (p *progress) keep(chunk string) {
	if len(chunk) >= progressTail {
		p.tail = append(p.tail[:0], chunk[len(chunk)-progressTail:]...)
		return
	}
	if over := len(p.tail) + len(chunk) - progressTail; over > 0 {
		p.tail = p.tail[:copy(p.tail, p.tail[over:])]
	}
	p.tail = append(p.tail, chunk...)
}

func (p *progress) terminal() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.terminalID
}
