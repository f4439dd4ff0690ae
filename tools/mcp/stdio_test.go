package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/permission"
)

func TestStdioServer(t *testing.T) {
	_, reg := mustConnect(t, nil, helperServer(t, "helper", "tools"))

	t.Run("tools are registered under prefixed, valid names", func(t *testing.T) {
		names := reg.Names()
		for _, want := range []string{"mcp__helper__echo", "mcp__helper__count", "mcp__helper__weird_name__"} {
			if !slices.Contains(names, want) {
				t.Errorf("missing %s in %v", want, names)
			}
		}
		long := toolName("helper", longToolName)
		if len(long) != maxNameLen || !slices.Contains(names, long) {
			t.Errorf("long name %q (%d chars) not registered in %v", long, len(long), names)
		}
		for _, n := range names {
			if !tools.ValidToolName(n) {
				t.Errorf("invalid tool name %q", n)
			}
		}
	})

	t.Run("a tool carries the server's description, schema, kind and title", func(t *testing.T) {
		echo := tool(t, reg, "mcp__helper__echo")
		if got, want := echo.Description(), "[MCP server helper] Echoes its message."; got != want {
			t.Errorf("description %q, want %q", got, want)
		}
		var schema struct {
			Type       string
			Properties map[string]any
			Required   []string
		}
		if err := json.Unmarshal(echo.InputSchema(), &schema); err != nil {
			t.Fatal(err)
		}
		if schema.Type != "object" || schema.Properties["message"] == nil || !slices.Equal(schema.Required, []string{"message"}) {
			t.Errorf("schema %s", echo.InputSchema())
		}
		if echo.Kind() != tools.KindRead || !echo.(tools.Parallel).ParallelSafe() {
			t.Errorf("echo: kind %s, want read and parallel", echo.Kind())
		}
		if got := echo.(tools.Titler).Title(nil); got != "helper: Echo" {
			t.Errorf("title %q", got)
		}
		count := tool(t, reg, "mcp__helper__count")
		if count.Kind() != tools.KindOther || count.(tools.Parallel).ParallelSafe() {
			t.Errorf("count: kind %s, want other and serial", count.Kind())
		}
		if got := count.(tools.Titler).Title(nil); got != "helper: count" {
			t.Errorf("title %q", got)
		}
	})

	t.Run("a call returns the server's text", func(t *testing.T) {
		res := run(t, reg, "mcp__helper__echo", nil, map[string]any{"message": "hi"})
		if res.IsError || res.Output != "echo: hi" {
			t.Errorf("got %+v", res)
		}
	})

	t.Run("every content kind is mapped to text", func(t *testing.T) {
		res := run(t, reg, "mcp__helper__mixed", nil, nil)
		want := strings.Join([]string{
			"hello",
			"[image: image/png, 3 bytes]",
			"[audio: audio/wav, 2 bytes]",
			"[resource link: a.txt <file:///tmp/a.txt> (text/plain)]",
			"[resource <mem://notes>]\nnote text",
			"[resource <mem://blob>: application/gzip, 4 bytes]",
		}, "\n")
		if res.IsError || res.Output != want {
			t.Errorf("got %q\nwant %q", res.Output, want)
		}
		if raw, _ := json.Marshal(res.RawOutput); string(raw) != `{"n":1}` {
			t.Errorf("raw output %s", raw)
		}
	})

	t.Run("structured content alone becomes JSON text", func(t *testing.T) {
		res := run(t, reg, "mcp__helper__structured", nil, map[string]any{})
		if res.IsError || res.Output != `{"temperature":21,"unit":"C"}` {
			t.Errorf("got %+v", res)
		}
	})

	t.Run("isError is an error result", func(t *testing.T) {
		res := run(t, reg, "mcp__helper__fail", nil, nil)
		if !res.IsError || res.Output != "MCP tool error: bad thing happened" {
			t.Errorf("got %+v", res)
		}
	})

	t.Run("arguments that are not an object are refused before the server", func(t *testing.T) {
		res := run(t, reg, "mcp__helper__echo", nil, []int{1})
		if !res.IsError || !strings.Contains(res.Output, "JSON object") {
			t.Errorf("got %+v", res)
		}
	})

	t.Run("a sanitized and a hashed name reach the right tools", func(t *testing.T) {
		if res := run(t, reg, "mcp__helper__weird_name__", nil, nil); res.Output != "weird" {
			t.Errorf("weird: %+v", res)
		}
		if res := run(t, reg, toolName("helper", longToolName), nil, nil); res.Output != "long" {
			t.Errorf("long: %+v", res)
		}
	})

	t.Run("progress notifications reach the call's reporter", func(t *testing.T) {
		var mu sync.Mutex
		var got []string
		rep := tools.ReporterFunc(func(p tools.Progress) {
			mu.Lock()
			defer mu.Unlock()
			for _, c := range p.Content {
				got = append(got, c.Text)
			}
		})
		res, err := runCtx(t.Context(), t, reg, "mcp__helper__progress", nil, nil, rep)
		if err != nil || res.IsError || !strings.HasPrefix(res.Output, "token=dshd-") {
			t.Fatalf("got %+v, %v", res, err)
		}
		mu.Lock()
		defer mu.Unlock()
		// Notifications are handled apart from the response; each that made
		// it before the call returned must be well formed.
		for _, g := range got {
			if g != "progress 1/2: step 1" && g != "progress 2/2: step 2" {
				t.Errorf("unexpected progress %q", g)
			}
		}
	})
}

func TestPermission(t *testing.T) {
	_, reg := mustConnect(t, nil, helperServer(t, "helper", "tools"))
	a := &asker{answers: []permission.Answer{permission.RejectOnce, permission.AllowOnce}}
	env := &tools.Env{Permission: permission.NewPolicy(permission.ModeAsk, a)}

	t.Run("a rejected call is an error result and never reaches the server", func(t *testing.T) {
		res := run(t, reg, "mcp__helper__count", env, map[string]any{})
		if !res.IsError || !strings.Contains(res.Output, "rejected") {
			t.Fatalf("got %+v", res)
		}
		res = run(t, reg, "mcp__helper__count", env, map[string]any{})
		if res.IsError || res.Output != "count=1" {
			t.Fatalf("the allowed call: %+v (count must be 1: the rejected call never ran)", res)
		}
		q := a.asked()
		if len(q) != 2 {
			t.Fatalf("asked %d times, want 2", len(q))
		}
		want := tools.PermissionRequest{ToolCallID: "call-1", ToolName: "mcp__helper__count", Title: "helper: count", Kind: tools.KindOther, Effect: tools.EffectExecute}
		got := q[0]
		got.RawInput = nil
		if !equalRequest(got, want) {
			t.Errorf("request %+v, want %+v", got, want)
		}
	})

	t.Run("a read-only tool runs without asking, even in ask mode", func(t *testing.T) {
		before := len(a.asked())
		res := run(t, reg, "mcp__helper__echo", env, map[string]any{"message": "x"})
		if res.IsError || len(a.asked()) != before {
			t.Errorf("got %+v, asked %d more times", res, len(a.asked())-before)
		}
	})

	t.Run("a permission request cancelled with the turn ends the call as cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		blocking := permission.AskerFunc(func(ctx context.Context, _ tools.PermissionRequest) (permission.Answer, error) {
			cancel()
			<-ctx.Done()
			return permission.AnswerCancelled, nil
		})
		env := &tools.Env{Permission: permission.NewPolicy(permission.ModeAsk, blocking)}
		_, err := runCtx(ctx, t, reg, "mcp__helper__count", env, map[string]any{}, tools.Discard)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err %v, want context.Canceled", err)
		}
	})
}

func equalRequest(a, b tools.PermissionRequest) bool {
	return a.ToolCallID == b.ToolCallID && a.ToolName == b.ToolName && a.Title == b.Title &&
		a.Kind == b.Kind && a.Effect == b.Effect
}

func TestCancel(t *testing.T) {
	_, reg := mustConnect(t, nil, helperServer(t, "helper", "tools"))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := runCtx(ctx, t, reg, "mcp__helper__block", nil, nil, blockingReporter(cancel))
		done <- err
	}()
	if err := await(t, done, "the cancelled call"); !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want context.Canceled", err)
	}
	// The server saw notifications/cancelled: its blocked handler ended.
	res := run(t, reg, "mcp__helper__cancelled", nil, nil)
	if res.Output != "cancelled=1" {
		t.Errorf("server side: %+v", res)
	}
}

// blockingReporter calls fn at the first progress report: the block tool
// reports once its handler runs.
func blockingReporter(fn func()) tools.Reporter {
	var once sync.Once
	return tools.ReporterFunc(func(tools.Progress) { once.Do(fn) })
}

func TestCrashMidCall(t *testing.T) {
	set, reg := mustConnect(t, nil, helperServer(t, "helper", "tools"))
	pid := helperPID(t, reg, "helper")

	res := run(t, reg, "mcp__helper__crash", nil, nil)
	if !res.IsError || !strings.Contains(res.Output, "no longer available") || !strings.Contains(res.Output, "exit status 3") {
		t.Errorf("crash call: %+v", res)
	}
	if exists(pid) {
		t.Errorf("pid %d still in /proc after the crash", pid)
	}
	res = run(t, reg, "mcp__helper__echo", nil, map[string]any{"message": "again"})
	if !res.IsError || !strings.Contains(res.Output, "no longer available") {
		t.Errorf("call after the crash: %+v", res)
	}
	if gone := set.Servers()[0].Gone; !strings.Contains(gone, "exit status 3") || !strings.Contains(gone, "crashing now") {
		t.Errorf("Gone = %q", gone)
	}
	closeAll(t, set, reg)
}

// helperPID asks the helper server its pid (and checks it runs).
func helperPID(t *testing.T, reg *tools.Registry, server string) int {
	t.Helper()
	pid, _ := helperPIDs(t, reg, server)
	return pid
}

func helperPIDs(t *testing.T, reg *tools.Registry, server string) (pid, grandchild int) {
	t.Helper()
	res := run(t, reg, "mcp__"+server+"__pids", nil, nil)
	if _, err := fmt.Sscanf(res.Output, "%d %d", &pid, &grandchild); err != nil || !running(pid) {
		t.Fatalf("pids: %q (%v)", res.Output, err)
	}
	return pid, grandchild
}

func TestStartFailures(t *testing.T) {
	const secret = "s3cr3t-token-value"
	cfgs := []ServerConfig{
		helperServer(t, "good", "tools"),
		{Name: "missing", Command: "/nonexistent/dir/mcp-server"},
		helperServer(t, "exits", "exit", EnvVar{Name: "HELPER_SECRET", Value: secret}),
		{Name: "", Command: "/bin/true"},
		{Name: "nocommand"},
		{Name: "badurl", Transport: TransportHTTP, URL: "ftp://example.org/x"},
		{Name: "weird", Transport: "carrier-pigeon"},
		helperServer(t, "good", "tools"), // duplicate name
	}
	set, reg, warnings := connect(t, nil, cfgs...)
	warnings = withoutRenames(warnings)

	want := []struct {
		server string
		kind   error
		text   string
	}{
		{"missing", ErrStart, "no such file"},
		{"exits", ErrExited, "boom: cannot start (token=[redacted])"},
		{"", ErrInvalidConfig, "no name"},
		{"nocommand", ErrInvalidConfig, "needs a command"},
		{"badurl", ErrInvalidConfig, "absolute http(s) URL"},
		{"weird", ErrUnsupportedTransport, "carrier-pigeon"},
		{"good", ErrInvalidConfig, "same name"},
	}
	if len(warnings) != len(want) {
		t.Fatalf("got %d warnings, want %d: %v", len(warnings), len(want), warnings)
	}
	for i, w := range want {
		got := warnings[i]
		if got.Server != w.server || !errors.Is(got, w.kind) || !strings.Contains(got.Error(), w.text) {
			t.Errorf("warning %d: %v (server %q), want server %q, kind %v, text %q", i, got, got.Server, w.server, w.kind, w.text)
		}
		if strings.Contains(got.Error(), secret) {
			t.Errorf("warning %d leaks the secret: %v", i, got)
		}
	}
	if !strings.Contains(warnings[1].Error(), "exit status 1") {
		t.Errorf("exit warning lacks the status: %v", warnings[1])
	}
	if s := set.Servers(); len(s) != 1 || s[0].Name != "good" {
		t.Fatalf("servers %+v", s)
	}
	if res := run(t, reg, "mcp__good__echo", nil, map[string]any{"message": "ok"}); res.Output != "echo: ok" {
		t.Errorf("the good server: %+v", res)
	}
}

func TestStartTimeout(t *testing.T) {
	set, _, warnings := connect(t, &Options{StartTimeout: 300 * time.Millisecond, KillGrace: 100 * time.Millisecond},
		helperServer(t, "silent", "hang"))
	if len(warnings) != 1 || !errors.Is(warnings[0], ErrStartTimeout) || warnings[0].Server != "silent" {
		t.Fatalf("warnings %v", warnings)
	}
	if !strings.Contains(warnings[0].Error(), "handshake") {
		t.Errorf("warning %v does not name the handshake", warnings[0])
	}
	if len(set.Servers()) != 0 {
		t.Errorf("servers %+v", set.Servers())
	}
}

func TestConnectCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	reg := tools.NewRegistry(nil)
	set, warnings := Connect(ctx, []ServerConfig{helperServer(t, "late", "hang")}, reg, &Options{KillGrace: 100 * time.Millisecond})
	defer set.Close()
	if len(warnings) != 1 || !errors.Is(warnings[0], ErrStart) || !strings.Contains(warnings[0].Error(), "cancelled") {
		t.Errorf("warnings %v", warnings)
	}
}

func TestClose(t *testing.T) {
	t.Run("a polite server exits when its stdin closes and is reaped", func(t *testing.T) {
		set, reg := mustConnect(t, nil, helperServer(t, "polite", "tools"))
		pid := helperPID(t, reg, "polite")
		closeAll(t, set, reg)
		if exists(pid) {
			t.Errorf("pid %d still in /proc", pid)
		}
	})

	t.Run("a stubborn server and its grandchild are killed with their group", func(t *testing.T) {
		set, reg := mustConnect(t, &Options{KillGrace: 100 * time.Millisecond}, helperServer(t, "stubborn", "stubborn"))
		pid, grandchild := helperPIDs(t, reg, "stubborn")
		if grandchild == 0 || !running(grandchild) {
			t.Fatalf("grandchild %d not running", grandchild)
		}
		if err := set.Close(); err != nil {
			t.Fatal(err)
		}
		if exists(pid) {
			t.Errorf("server pid %d still in /proc", pid)
		}
		// The grandchild's parent is gone, so reaping it is init's job; it
		// must at least not run.
		if running(grandchild) {
			t.Errorf("grandchild %d still running", grandchild)
		}
	})

	t.Run("Close is idempotent and later calls fail cleanly", func(t *testing.T) {
		set, reg := mustConnect(t, nil, helperServer(t, "twice", "tools"))
		echo := tool(t, reg, "mcp__twice__echo")
		if err := set.Close(); err != nil {
			t.Fatal(err)
		}
		if err := set.Close(); err != nil {
			t.Fatal(err)
		}
		res, err := echo.Execute(t.Context(), &tools.Call{ID: "c", Input: json.RawMessage(`{"message":"x"}`), Report: tools.Discard})
		if err != nil || !res.IsError || !strings.Contains(res.Output, "shut down") {
			t.Errorf("got %+v, %v", res, err)
		}
	})

	t.Run("Close during a call ends the call with an error result", func(t *testing.T) {
		set, reg := mustConnect(t, nil, helperServer(t, "busy", "tools"))
		done := make(chan *tools.Result, 1)
		started := make(chan struct{})
		go func() {
			res, _ := runCtx(context.Background(), t, reg, "mcp__busy__block", nil, nil, blockingReporter(func() { close(started) }))
			done <- res
		}()
		await(t, started, "the blocked call to start")
		if err := set.Close(); err != nil {
			t.Fatal(err)
		}
		res := await(t, done, "the blocked call")
		if res == nil || !res.IsError {
			t.Errorf("got %+v", res)
		}
	})

	t.Run("a nil Set closes", func(t *testing.T) {
		var s *Set
		if err := s.Close(); err != nil || s.Servers() != nil {
			t.Error("nil Set misbehaves")
		}
	})
}

func TestToolListChanged(t *testing.T) {
	changed := make(chan []string, 4)
	opts := &Options{OnToolsChanged: func(server string, names []string) {
		if server == "helper" {
			changed <- names
		}
	}}
	_, reg := mustConnect(t, opts, helperServer(t, "helper", "tools"))
	if _, ok := reg.Get("mcp__helper__late"); ok {
		t.Fatal("late is registered before it exists")
	}

	run(t, reg, "mcp__helper__grow", nil, nil)
	for names := await(t, changed, "the re-sync after grow"); !slices.Contains(names, "mcp__helper__late"); {
		names = await(t, changed, "a re-sync with late")
	}
	if res := run(t, reg, "mcp__helper__late", nil, nil); res.Output != "late" {
		t.Errorf("late: %+v", res)
	}

	run(t, reg, "mcp__helper__shrink", nil, nil)
	for names := await(t, changed, "the re-sync after shrink"); slices.Contains(names, "mcp__helper__late"); {
		names = await(t, changed, "a re-sync without late")
	}
	if _, ok := reg.Get("mcp__helper__late"); ok {
		t.Error("late is still registered")
	}
}

func TestEnvironmentAndCwd(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("DSHD_PRIVATE_KEY", "must-not-leak")
	cfg := helperServer(t, "env", "tools", EnvVar{Name: "MY_SETTING", Value: "on"}, EnvVar{Name: "HOME", Value: "/custom/home"})
	_, reg := mustConnect(t, &Options{Cwd: dir}, cfg)
	res := run(t, reg, "mcp__env__env", nil, nil)
	var got struct {
		Cwd string
		Env []string
	}
	if err := json.Unmarshal([]byte(res.Output), &got); err != nil {
		t.Fatalf("%v: %s", err, res.Output)
	}
	want, _ := filepath.EvalSymlinks(dir)
	if cwd, _ := filepath.EvalSymlinks(got.Cwd); cwd != want {
		t.Errorf("cwd %q, want %q", got.Cwd, dir)
	}
	has := func(kv string) bool { return slices.Contains(got.Env, kv) }
	if !has("MY_SETTING=on") || !has("HOME=/custom/home") {
		t.Errorf("configured env missing: %v", got.Env)
	}
	if path, ok := os.LookupEnv("PATH"); ok && !has("PATH="+path) {
		t.Errorf("PATH not inherited: %v", got.Env)
	}
	for _, kv := range got.Env {
		if strings.HasPrefix(kv, "DSHD_PRIVATE_KEY=") {
			t.Errorf("private variable inherited: %s", kv)
		}
	}
}
