package builtin

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/internal/tooltest"
	"github.com/dshd/dshd/tools/localrun"
	"github.com/dshd/dshd/tools/permission"
	"github.com/dshd/dshd/tools/workspace"
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
		Runner:     localrun.New(&localrun.Options{KillGrace: 500 * time.Millisecond}),
		Permission: permission.NewPolicy(permission.ModeYolo, nil),
	}, dir
}

// write and read are tooltest's.
var (
	write = tooltest.Write
	read  = tooltest.Read
)

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

// await is tooltest.Await.
func await[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	return tooltest.Await(t, ch, what)
}
