package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/permission"
)

func TestRunCommand(t *testing.T) {
	env, dir := testEnv(t)
	tool := NewRunCommand(nil)
	t.Run("success returns the output and exit code 0", func(t *testing.T) {
		res := call(t, tool, env, RunCommandParams{Command: "echo hello; echo oops >&2"})
		mustContain(t, res, false, "hello\noops\n", "[exit code 0]")
		raw := res.RawOutput.(map[string]any)
		if code := raw["exitCode"].(*int); *code != 0 {
			t.Errorf("rawOutput = %+v", raw)
		}
	})
	t.Run("a non-zero exit is an error result with the output", func(t *testing.T) {
		mustContain(t, call(t, tool, env, RunCommandParams{Command: "echo bad; exit 7"}), true, "bad\n", "[exit code 7]")
	})
	t.Run("cwd is resolved inside the workspace", func(t *testing.T) {
		if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		mustContain(t, call(t, tool, env, RunCommandParams{Command: "pwd", Cwd: "sub"}), false, filepath.Join(dir, "sub")+"\n")
		mustContain(t, call(t, tool, env, RunCommandParams{Command: "pwd", Cwd: "/"}), true, "outside the workspace")
	})
	t.Run("a timeout stops the command and says so", func(t *testing.T) {
		tool := NewRunCommand(&RunCommandOptions{DefaultTimeout: 100 * time.Millisecond})
		res := call(t, tool, env, RunCommandParams{Command: "echo started; sleep 1000"})
		mustContain(t, res, true, "started", "timed out after 100ms")
		if res.RawOutput.(map[string]any)["timedOut"] != true {
			t.Errorf("rawOutput = %+v", res.RawOutput)
		}
	})
	t.Run("long output keeps the tail and says it was truncated", func(t *testing.T) {
		tool := NewRunCommand(&RunCommandOptions{OutputLimit: 100})
		res := call(t, tool, env, RunCommandParams{Command: "seq 1 10000"})
		mustContain(t, res, false, "[output truncated: showing the last 100 bytes]", "\n10000\n")
		if strings.Contains(res.Output, "\n1\n") {
			t.Error("the head was kept")
		}
	})
	t.Run("a refused command does not run, and nobody is said to have rejected it", func(t *testing.T) {
		env := *env
		env.Permission = permission.DenyAll
		marker := filepath.Join(dir, "ran")
		res := call(t, tool, &env, RunCommandParams{Command: "touch " + marker})
		mustContain(t, res, true, "was refused without asking anyone")
		if strings.Contains(res.Output, "user") {
			t.Errorf("a refusal nobody was asked for mentions a user: %q", res.Output)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Error("the rejected command ran")
		}
	})
	t.Run("accept-edits asks before a command", func(t *testing.T) {
		env := *env
		var asked []tools.PermissionRequest
		env.Permission = permission.NewPolicy(permission.ModeAcceptEdits, permission.AskerFunc(func(_ context.Context, r tools.PermissionRequest) (permission.Answer, error) {
			asked = append(asked, r)
			return permission.AllowOnce, nil
		}))
		call(t, tool, &env, RunCommandParams{Command: "true"})
		if len(asked) != 1 || asked[0].Effect != tools.EffectExecute || asked[0].Title != "true" || asked[0].Kind != tools.KindExecute {
			t.Errorf("asked = %+v", asked)
		}
	})
	t.Run("cancelled while asking ends the call with the context's error", func(t *testing.T) {
		env := *env
		ctx, cancel := context.WithCancel(t.Context())
		env.Permission = permission.NewPolicy(permission.ModeAsk, permission.AskerFunc(func(ctx context.Context, _ tools.PermissionRequest) (permission.Answer, error) {
			cancel()
			<-ctx.Done()
			return permission.AnswerCancelled, nil
		}))
		_, err := callCtx(ctx, t, tool, &env, RunCommandParams{Command: "true"}, tools.Discard)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("the title is the command", func(t *testing.T) {
		if got := tool.(tools.Titler).Title(json.RawMessage(`{"command":"go test ./..."}`)); got != "go test ./..." {
			t.Errorf("title = %q", got)
		}
	})
}

func TestRunCommandStreamsOutputWhileRunning(t *testing.T) {
	env, dir := testEnv(t)
	flag := filepath.Join(dir, "go-on")
	updates := make(chan tools.Progress, 100)
	rep := tools.ReporterFunc(func(p tools.Progress) { updates <- p })
	done := make(chan *tools.Result, 1)
	go func() {
		res, err := callCtx(t.Context(), t, NewRunCommand(nil), env, RunCommandParams{
			Command: `echo working; while [ ! -e go-on ]; do sleep 0.01; done; echo finished`,
		}, rep)
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	p := await(t, updates, "a progress report")
	if len(p.Content) != 1 || !strings.Contains(p.Content[0].Text, "working") {
		t.Fatalf("progress = %+v", p)
	}
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	mustContain(t, await(t, done, "the result"), false, "working\nfinished\n")
}

// terminalRunner is a Runner that reports a terminal, as the editor-backed
// one does.
type terminalRunner struct {
	mu     sync.Mutex
	cmds   []tools.Command
	result tools.CommandResult
	err    error
}

func (r *terminalRunner) Run(ctx context.Context, cmd tools.Command, started func(string), output func(string)) (tools.CommandResult, error) {
	r.mu.Lock()
	r.cmds = append(r.cmds, cmd)
	r.mu.Unlock()
	if r.err != nil {
		return tools.CommandResult{}, r.err
	}
	started("term-7")
	output("ignored: the terminal shows it")
	return r.result, nil
}

func TestRunCommandWithAnEditorTerminal(t *testing.T) {
	env, dir := testEnv(t)
	zero := 0
	runner := &terminalRunner{result: tools.CommandResult{Output: "ok\n", ExitCode: &zero}}
	env.Runner = runner
	var reports []tools.Progress
	res, err := callCtx(t.Context(), t, NewRunCommand(nil), env, RunCommandParams{Command: "make", Timeout: 5}, tools.ReporterFunc(func(p tools.Progress) { reports = append(reports, p) }))
	if err != nil {
		t.Fatal(err)
	}
	want := tools.Content{Type: tools.ContentTerminal, TerminalID: "term-7"}
	if len(reports) != 1 || len(reports[0].Content) != 1 || reports[0].Content[0] != want {
		t.Errorf("reports = %+v", reports)
	}
	// The finished terminal carries its output as text for a replay.
	done := tools.Content{Type: tools.ContentTerminal, TerminalID: "term-7", Text: "```console\nok\n```\nexit code 0"}
	if len(res.Content) != 1 || res.Content[0] != done || !strings.Contains(res.Output, "ok\n") {
		t.Errorf("result = %+v", res)
	}
	if c := runner.cmds[0]; c.Command != "make" || c.Dir != dir || c.Timeout != 5*time.Second || c.OutputLimit != 30000 {
		t.Errorf("command = %+v", c)
	}
	t.Run("a runner that cannot start is an error result", func(t *testing.T) {
		env.Runner = &terminalRunner{err: errors.New("terminal/create failed")}
		mustContain(t, call(t, NewRunCommand(nil), env, RunCommandParams{Command: "make"}), true, "terminal/create failed")
	})
	t.Run("a timeout above the maximum is capped", func(t *testing.T) {
		runner := &terminalRunner{result: tools.CommandResult{ExitCode: &zero}}
		env.Runner = runner
		call(t, NewRunCommand(&RunCommandOptions{MaxTimeout: time.Minute}), env, RunCommandParams{Command: "x", Timeout: 3600})
		if runner.cmds[0].Timeout != time.Minute {
			t.Errorf("timeout = %v", runner.cmds[0].Timeout)
		}
	})
}

func TestPlan(t *testing.T) {
	env, _ := testEnv(t)
	var got []tools.PlanEntry
	env.Plan = func(e []tools.PlanEntry) { got = e }
	tool := NewPlan()
	res := call(t, tool, env, PlanParams{Entries: []PlanParamsEntry{
		{Content: "read", Priority: "high", Status: "completed"},
		{Content: "write", Priority: "medium", Status: "in_progress"},
		{Content: "test", Priority: "low", Status: "pending"},
	}})
	mustContain(t, res, false, "3 steps (1 completed, 1 in progress, 1 pending)")
	if len(got) != 3 || got[1] != (tools.PlanEntry{Content: "write", Priority: "medium", Status: "in_progress"}) {
		t.Errorf("published %+v", got)
	}
	for _, bad := range []PlanParamsEntry{
		{Content: "x", Priority: "urgent", Status: "pending"},
		{Content: "x", Priority: "high", Status: "done"},
		{Content: " ", Priority: "high", Status: "pending"},
	} {
		got = nil
		res := call(t, tool, env, PlanParams{Entries: []PlanParamsEntry{bad}})
		if !res.IsError || got != nil {
			t.Errorf("%+v: IsError=%v, published %v", bad, res.IsError, got)
		}
	}
}

// TestBuiltinTitles checks each built-in tool's title of a call: from its
// arguments, and the tool's generic one when the argument it names is
// missing or, for the tools whose title reads their decoded params, when
// the arguments do not decode.
func TestBuiltinTitles(t *testing.T) {
	tests := []struct {
		tool      tools.Tool
		in, title string
	}{
		{NewReadFile(nil), `{"path":"a.go","offset":5}`, "Read a.go (from line 5)"},
		{NewReadFile(nil), `{"offset":5}`, "Read file"},
		{NewReadFile(nil), `{"path":"a.go","file":"b.go"}`, "Read file"},
		{NewGlob(nil), `{"pattern":"**/*.go","path":"src"}`, "Find **/*.go in src"},
		{NewGlob(nil), `{"path":"src"}`, "Find files"},
		{NewGlob(nil), `{"pattern":"**/*.go","max":3}`, "Find files"},
		{NewGrep(nil), `{"pattern":"func main","include":"*.go"}`, `Search "func main" (*.go)`},
		{NewGrep(nil), `{}`, "Search files"},
		{NewGrep(nil), `{"pattern":"x","context":"2"}`, "Search files"},
		{NewListDir(nil), `{"path":"src"}`, "List src"},
		{NewListDir(nil), `{}`, "List directory"},
		{NewWriteFile(), `{"path":"a.go","content":"x"}`, "Write a.go"},
		{NewWriteFile(), `{"content":"x"}`, "Write file"},
		{NewEditFile(), `{"path":"a.go","old_text":"a","new_text":"b"}`, "Edit a.go"},
		{NewEditFile(), `{}`, "Edit file"},
		{NewRunCommand(nil), `{}`, "Run command"},
		{NewPlan(), `{"entries":[]}`, "Update plan"},
	}
	for _, tc := range tests {
		if got := tc.tool.(tools.Titler).Title(json.RawMessage(tc.in)); got != tc.title {
			t.Errorf("%s %s: title = %q, want %q", tc.tool.Name(), tc.in, got, tc.title)
		}
	}
}

func TestBuiltins(t *testing.T) {
	r := tools.NewRegistry(nil)
	for _, tool := range Builtins(nil) {
		if _, err := r.Register(tool); err != nil {
			t.Fatal(err)
		}
		var schema map[string]any
		if err := json.Unmarshal(tool.InputSchema(), &schema); err != nil || schema["type"] != "object" {
			t.Errorf("%s: schema %s: %v", tool.Name(), tool.InputSchema(), err)
		}
		if strings.Contains(tool.Description(), "{{") || len(tool.Description()) < 100 {
			t.Errorf("%s: description %q", tool.Name(), tool.Description())
		}
		if _, ok := tool.(tools.Titler); !ok {
			t.Errorf("%s has no Titler", tool.Name())
		}
	}
	want := []string{EditFileName, GlobName, GrepName, ListDirName, PlanName, ReadFileName, RunCommandName, WriteFileName}
	if got := r.Names(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("names = %v", got)
	}
}
