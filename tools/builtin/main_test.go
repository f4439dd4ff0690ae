package builtin

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/permission"
	"github.com/dshd/dshd/tools/workspace"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testEnv is a session environment over a fresh temporary directory: the
// local disk, local processes, and a yolo policy unless a test swaps it.
func testEnv(t testing.TB) (*tools.Env, string) {
	t.Helper()
	dir := t.TempDir()
	ws, err := workspace.New(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &tools.Env{
		Workspace:  ws,
		FS:         workspace.NewLocalFS(ws),
		Runner:     tools.NewLocalRunner(&tools.RunnerOptions{KillGrace: 500 * time.Millisecond}),
		Permission: permission.NewPolicy(permission.ModeYolo, nil),
	}, dir
}

// write creates dir/rel with content, and its parents.
func write(t testing.TB, dir, rel, content string) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// read returns the content of dir/rel.
func read(t testing.TB, dir, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// call runs tool with input (marshalled unless it is a string) in env and
// fails the test on a Go error.
func call(t testing.TB, tool tools.Tool, env *tools.Env, input any) *tools.Result {
	t.Helper()
	res, err := callErr(t, tool, env, input)
	if err != nil {
		t.Fatalf("%s: unexpected error: %v", tool.Name(), err)
	}
	return res
}

func callErr(t testing.TB, tool tools.Tool, env *tools.Env, input any) (*tools.Result, error) {
	t.Helper()
	return callCtx(t.Context(), t, tool, env, input, tools.Discard)
}

func callCtx(ctx context.Context, t testing.TB, tool tools.Tool, env *tools.Env, input any, rep tools.Reporter) (*tools.Result, error) {
	t.Helper()
	raw, ok := input.(string)
	if !ok {
		b, err := json.Marshal(input)
		if err != nil {
			t.Fatal(err)
		}
		raw = string(b)
	}
	return tool.Execute(ctx, &tools.Call{ID: "call-1", Input: json.RawMessage(raw), Env: env, Report: rep})
}

// await waits for ch under a watchdog that dumps every goroutine.
func await[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(20 * time.Second):
		buf := make([]byte, 1<<20)
		t.Fatalf("timed out waiting for %s\n%s", what, buf[:runtime.Stack(buf, true)])
	}
	panic("unreachable")
}
