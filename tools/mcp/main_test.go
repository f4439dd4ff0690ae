package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/internal/tooltest"
	"github.com/dshd/dshd/tools/permission"
	"github.com/dshd/dshd/tools/sandbox"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// The sandbox's helper first: it runs with the server's environment.
	if len(os.Args) > 1 && os.Args[1] == "sandbox" {
		os.Exit(sandbox.Main(os.Args[2:]))
	}
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode))
	}
	goleak.VerifyTestMain(m)
}

// helperServer configures the re-executed test binary as a stdio server.
func helperServer(t testing.TB, name, mode string, env ...EnvVar) ServerConfig {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return ServerConfig{
		Name:    name,
		Command: exe,
		// The race runtime sleeps a second at exit unless told not to.
		Env: append([]EnvVar{{Name: helperEnv, Value: mode}, {Name: "GORACE", Value: "atexit_sleep_ms=0"}}, env...),
	}
}

// connect runs Connect into a fresh registry and closes the Set at cleanup.
func connect(t testing.TB, opts *Options, cfgs ...ServerConfig) (*Set, *tools.Registry, []Warning) {
	t.Helper()
	reg := tools.NewRegistry(nil)
	set, warnings := Connect(t.Context(), cfgs, reg, opts)
	t.Cleanup(func() { _ = set.Close() })
	return set, reg, warnings
}

// mustConnect is connect for servers that must all come up with every
// tool; a tool offered under another name (the helper's long and odd
// names) is not a failure.
func mustConnect(t testing.TB, opts *Options, cfgs ...ServerConfig) (*Set, *tools.Registry) {
	t.Helper()
	set, reg, warnings := connect(t, opts, cfgs...)
	for _, w := range withoutRenames(warnings) {
		t.Errorf("unexpected warning: %v", w)
	}
	if t.Failed() {
		t.FailNow()
	}
	return set, reg
}

// withoutRenames is warnings less those of tools offered under another
// name.
func withoutRenames(warnings []Warning) []Warning {
	return slices.DeleteFunc(slices.Clone(warnings), func(w Warning) bool { return errors.Is(w, ErrToolRenamed) })
}

// closeAll closes set and checks that it took every tool of its servers
// out of reg.
func closeAll(t testing.TB, set *Set, reg *tools.Registry) {
	t.Helper()
	if err := set.Close(); err != nil {
		t.Fatal(err)
	}
	if n := reg.Names(); len(n) != 0 {
		t.Errorf("tools left after Close: %v", n)
	}
}

// tool returns the registered tool called name.
func tool(t testing.TB, reg *tools.Registry, name string) tools.Tool {
	t.Helper()
	tl, ok := reg.Get(name)
	if !ok {
		t.Fatalf("tool %s not registered; have %v", name, reg.Names())
	}
	return tl
}

// run calls the named tool with input in env (yolo when nil) and fails
// the test on a Go error.
func run(t testing.TB, reg *tools.Registry, name string, env *tools.Env, input any) *tools.Result {
	t.Helper()
	res, err := runCtx(t.Context(), t, reg, name, env, input, tools.Discard)
	if err != nil {
		t.Fatalf("%s: unexpected error: %v", name, err)
	}
	return res
}

func runCtx(ctx context.Context, t testing.TB, reg *tools.Registry, name string, env *tools.Env, input any, rep tools.Reporter) (*tools.Result, error) {
	t.Helper()
	if env == nil {
		env = &tools.Env{Permission: permission.NewPolicy(permission.ModeYolo, nil)}
	}
	b, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	return tool(t, reg, name).Execute(ctx, &tools.Call{ID: "call-1", Input: b, Env: env, Report: rep})
}

// await is tooltest.Await.
func await[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	return tooltest.Await(t, ch, what)
}

// running reports whether pid is a live (not zombie) process.
func running(pid int) bool { return !testkit.Ended(pid) }

// exists reports whether pid has any /proc entry, zombie included.
func exists(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err == nil
}

// asker is a fake permission.Asker that records the questions and answers each
// with the next queued answer.
type asker struct {
	mu        sync.Mutex
	answers   []permission.Answer
	questions []tools.PermissionRequest
}

func (a *asker) Ask(_ context.Context, req tools.PermissionRequest) (permission.Answer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.questions = append(a.questions, req)
	if len(a.answers) == 0 {
		return permission.RejectOnce, nil
	}
	ans := a.answers[0]
	a.answers = a.answers[1:]
	return ans, nil
}

func (a *asker) asked() []tools.PermissionRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]tools.PermissionRequest(nil), a.questions...)
}
