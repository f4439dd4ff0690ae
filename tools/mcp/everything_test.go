package mcp

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/mcp/mcptest"
	"github.com/dshd/dshd/tools/permission"
)

// everythingServer configures @modelcontextprotocol/server-everything,
// installed by `make npm` in testdata/npm, as a stdio server run by node.
// The test is skipped when node_modules is absent (a plain `go test`).
func everythingServer(t *testing.T, env ...EnvVar) ServerConfig {
	t.Helper()
	node, script := mcptest.Everything(t, ".")
	return ServerConfig{Name: "everything", Command: node, Args: []string{script, "stdio"}, Env: env}
}

func TestServerEverything(t *testing.T) {
	cfg := everythingServer(t, EnvVar{Name: "EVERYTHING_SETTING", Value: "configured"})
	t.Setenv("DSHD_PRIVATE_KEY", "must-not-leak")
	dir := t.TempDir()
	set, reg := mustConnect(t, &Options{Cwd: dir, Roots: []string{dir}}, cfg)

	t.Run("its tools are registered under prefixed names", func(t *testing.T) {
		names := reg.Names()
		for _, want := range []string{"mcp__everything__echo", "mcp__everything__get-sum", "mcp__everything__get-structured-content", "mcp__everything__gzip-file-as-resource"} {
			if !slices.Contains(names, want) {
				t.Errorf("missing %s in %v", want, names)
			}
		}
		for _, n := range names {
			if !strings.HasPrefix(n, "mcp__everything__") || !tools.ValidToolName(n) {
				t.Errorf("bad name %q", n)
			}
		}
		echo := tool(t, reg, "mcp__everything__echo")
		if !strings.HasPrefix(echo.Description(), "[MCP server everything] ") || echo.Kind() != tools.KindRead {
			t.Errorf("echo: %q, kind %s", echo.Description(), echo.Kind())
		}
		var schema struct{ Properties map[string]any }
		if err := json.Unmarshal(echo.InputSchema(), &schema); err != nil || schema.Properties["message"] == nil {
			t.Errorf("echo schema %s (%v)", echo.InputSchema(), err)
		}
	})

	t.Run("echo and get-sum answer", func(t *testing.T) {
		if res := run(t, reg, "mcp__everything__echo", nil, map[string]any{"message": "hi"}); res.IsError || res.Output != "Echo: hi" {
			t.Errorf("echo: %+v", res)
		}
		if res := run(t, reg, "mcp__everything__get-sum", nil, map[string]any{"a": 2, "b": 3}); res.IsError || res.Output != "The sum of 2 and 3 is 5." {
			t.Errorf("get-sum: %+v", res)
		}
	})

	t.Run("a server-side validation error is an error result", func(t *testing.T) {
		res := run(t, reg, "mcp__everything__get-sum", nil, map[string]any{"a": "two"})
		if !res.IsError {
			t.Errorf("got %+v", res)
		}
	})

	t.Run("structured content and images are mapped", func(t *testing.T) {
		res := run(t, reg, "mcp__everything__get-structured-content", nil, map[string]any{"location": "Chicago"})
		if res.IsError || !strings.Contains(res.Output, `"temperature":36`) {
			t.Errorf("structured: %+v", res)
		}
		if raw, _ := json.Marshal(res.RawOutput); !strings.Contains(string(raw), `"conditions":"Light rain / drizzle"`) {
			t.Errorf("raw output %s", raw)
		}
		res = run(t, reg, "mcp__everything__get-tiny-image", nil, map[string]any{})
		if res.IsError || !strings.Contains(res.Output, "[image: image/png, ") {
			t.Errorf("image: %+v", res)
		}
	})

	t.Run("a tool that is not read-only asks, and runs only when allowed", func(t *testing.T) {
		a := &asker{answers: []permission.Answer{permission.RejectOnce, permission.AllowOnce}}
		env := &tools.Env{Permission: permission.NewPolicy(permission.ModeAsk, a)}
		input := map[string]any{"name": "hello.gz", "data": "data:text/plain;base64,aGVsbG8gd29ybGQ=", "outputType": "resource"}
		res := run(t, reg, "mcp__everything__gzip-file-as-resource", env, input)
		if !res.IsError || !strings.Contains(res.Output, "rejected") {
			t.Fatalf("rejected call: %+v", res)
		}
		res = run(t, reg, "mcp__everything__gzip-file-as-resource", env, input)
		if res.IsError || !strings.Contains(res.Output, ": application/gzip, ") {
			t.Fatalf("allowed call: %+v", res)
		}
		q := a.asked()
		if len(q) != 2 || q[0].Effect != tools.EffectExecute || q[0].Kind != tools.KindOther || q[0].ToolName != "mcp__everything__gzip-file-as-resource" {
			t.Errorf("questions %+v", q)
		}
	})

	t.Run("it gets its configured env and a minimal inherited one", func(t *testing.T) {
		res := run(t, reg, "mcp__everything__get-env", nil, map[string]any{})
		var env map[string]string
		if err := json.Unmarshal([]byte(res.Output), &env); err != nil {
			t.Fatalf("%v: %s", err, res.Output)
		}
		if env["EVERYTHING_SETTING"] != "configured" {
			t.Errorf("configured variable missing: %v", env)
		}
		if _, ok := env["DSHD_PRIVATE_KEY"]; ok {
			t.Error("private variable inherited")
		}
	})

	t.Run("it sees the session's roots", func(t *testing.T) {
		res := run(t, reg, "mcp__everything__get-roots-list", nil, map[string]any{})
		if res.IsError || !strings.Contains(res.Output, "file://"+filepath.ToSlash(dir)) {
			t.Errorf("got %+v", res)
		}
	})

	t.Run("Close leaves no process and no tool", func(t *testing.T) {
		pid := set.Servers()[0].PID
		if pid == 0 || !running(pid) {
			t.Fatalf("pid %d not running", pid)
		}
		closeAll(t, set, reg)
		if exists(pid) {
			t.Errorf("node pid %d still in /proc", pid)
		}
	})
}
