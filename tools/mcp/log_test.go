package mcp

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
	"github.com/dshd/dshd/tools"
)

func TestStderrGoesToTheLog(t *testing.T) {
	const secret = "tok-0a1b2c3d"
	var buf testkit.SyncBuffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	_, _, warnings := connect(t, &Options{Logger: log}, helperServer(t, "loud", "exit", EnvVar{Name: "HELPER_SECRET", Value: secret}))
	if len(warnings) != 1 {
		t.Fatalf("warnings %v", warnings)
	}
	out := buf.String()
	if !strings.Contains(out, "mcp server stderr") || !strings.Contains(out, "boom: cannot start (token=[redacted])") || !strings.Contains(out, "mcp_server=loud") {
		t.Errorf("stderr not logged:\n%s", out)
	}
	if strings.Contains(out, secret) {
		t.Errorf("the log leaks the secret:\n%s", out)
	}
}

func BenchmarkCall(b *testing.B) {
	_, reg := mustConnect(b, nil, helperServer(b, "bench", "tools"))
	echo := tool(b, reg, "mcp__bench__echo")
	call := &tools.Call{ID: "c", Input: []byte(`{"message":"hi"}`), Env: &tools.Env{}, Report: tools.Discard}
	b.ReportAllocs()
	for b.Loop() {
		res, err := echo.Execute(b.Context(), call)
		if err != nil || res.IsError {
			b.Fatal(res, err)
		}
	}
}

func BenchmarkConnectAndClose(b *testing.B) {
	cfg := helperServer(b, "bench", "tools")
	for b.Loop() {
		reg := tools.NewRegistry(nil)
		set, warnings := Connect(b.Context(), []ServerConfig{cfg}, reg, nil)
		// The helper's long and odd tool names are renamed on purpose.
		if w := withoutRenames(warnings); len(w) != 0 {
			b.Fatal(w)
		}
		_ = set.Close()
	}
}
