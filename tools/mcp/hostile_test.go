package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshd/dshd/internal/testkit"
	"github.com/dshd/dshd/tools"
)

// hostile configures the hand-written misbehaving server
// (hostile_helper_test.go) with the tools/list answer list.
func hostile(t testing.TB, list string) ServerConfig {
	t.Helper()
	return helperServer(t, "h", "hostile", EnvVar{Name: hostileListEnv, Value: list})
}

// flags are the daemon's names of the limits and the sandbox, which its
// refusals and logs must carry.
var flags = Settings{
	CallTimeout: "--mcp-call-timeout", MaxOutput: "--mcp-max-output-bytes", MaxMessageBytes: "--mcp-max-message-bytes",
	MaxTools: "--mcp-max-tools", MaxDescriptionBytes: "--mcp-max-tool-description-bytes", MaxSchemaBytes: "--mcp-max-tool-schema-bytes",
	MaxSchemaDepth: "--mcp-max-tool-schema-depth", ProgressInterval: "--mcp-progress-interval", Sandbox: "--mcp-sandbox",
}

// logTo returns a logger writing text lines to buf, debug included.
func logTo(buf *testkit.SyncBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// warnings returns the log's lines at WARN that contain msg.
func warnLines(buf *testkit.SyncBuffer, msg string) []string {
	var out []string
	for _, l := range strings.Split(buf.String(), "\n") {
		if strings.Contains(l, "level=WARN") && strings.Contains(l, msg) {
			out = append(out, l)
		}
	}
	return out
}

// checkOneWarning checks that the log has one line at WARN that contains
// msg, and that it names the server h and each of also.
func checkOneWarning(t *testing.T, buf *testkit.SyncBuffer, msg string, also ...string) {
	t.Helper()
	w := warnLines(buf, msg)
	if len(w) != 1 || !strings.Contains(w[0], "mcp_server=h") {
		t.Errorf("want one warning %q naming the server, got %q", msg, w)
		return
	}
	for _, a := range also {
		if !strings.Contains(w[0], a) {
			t.Errorf("the warning does not say %q: %s", a, w[0])
		}
	}
}

func TestStdoutLineThatIsNotJSONIsSkipped(t *testing.T) {
	var buf testkit.SyncBuffer
	_, reg := mustConnect(t, &Options{Logger: logTo(&buf)}, hostile(t, ""))
	for range 2 {
		if res := run(t, reg, "mcp__h__banner", nil, nil); res.IsError || res.Output != "after the banner" {
			t.Fatalf("a banner on stdout broke the call: %+v", res)
		}
	}
	w := warnLines(&buf, "not a JSON-RPC message")
	if len(w) != 1 || !strings.Contains(w[0], "mcp_server=h") || !strings.Contains(w[0], "Server ready!") {
		t.Errorf("want one warning naming the server and quoting the line, got %q\n%s", w, buf.String())
	}
}

func TestAnswerOverTheMessageLimitFailsOnlyItsCall(t *testing.T) {
	var buf testkit.SyncBuffer
	const limit = 1 << 20
	_, reg := mustConnect(t, &Options{Logger: logTo(&buf), MaxMessageBytes: limit, Settings: flags}, hostile(t, ""))
	for range 2 {
		res := run(t, reg, "mcp__h__bigtext", nil, map[string]any{"n": 3 * limit})
		if !res.IsError || !strings.Contains(res.Output, "over 1048576 bytes") || !strings.Contains(res.Output, "--mcp-max-message-bytes") || !strings.Contains(res.Output, `"h"`) {
			t.Fatalf("an oversized answer: %.300s", res.Output)
		}
	}
	if res := run(t, reg, "mcp__h__bigtext", nil, map[string]any{"n": 10}); res.IsError || res.Output != "xxxxxxxxxx" {
		t.Errorf("the server is not usable after an oversized answer: %.300s", res.Output)
	}
	checkOneWarning(t, &buf, "over the limit", "mcp-max-message-bytes")
}

func TestToolsOverTheLimitAreLeftOut(t *testing.T) {
	for _, list := range []string{"many 5000", "endless"} {
		t.Run(list, func(t *testing.T) {
			var buf testkit.SyncBuffer
			set, _, warnings := connect(t, &Options{Logger: logTo(&buf), MaxTools: 10, StartTimeout: 10 * time.Second, Settings: flags}, hostile(t, list))
			if len(warnings) != 1 || !errors.Is(warnings[0], ErrTool) || !strings.Contains(warnings[0].Error(), "more than 10 tools") || !strings.Contains(warnings[0].Error(), "--mcp-max-tools") {
				t.Fatalf("want one warning naming the limit, got %v", warnings)
			}
			if s := set.Servers(); len(s) != 1 || len(s[0].Tools) != 10 {
				t.Fatalf("servers %+v", s)
			}
			checkOneWarning(t, &buf, "more than 10 tools")
		})
	}
}

func TestLongToolDescriptionIsCut(t *testing.T) {
	var buf testkit.SyncBuffer
	_, reg := mustConnect(t, &Options{Logger: logTo(&buf), MaxDescriptionBytes: 1000, Settings: flags}, hostile(t, "bigdesc 1000000"))
	d := tool(t, reg, "mcp__h__bigtext").Description()
	if len(d) > 1100 || !strings.HasSuffix(d, "[description cut at 1000 of 1000000 bytes]") {
		t.Errorf("description of %d bytes: %.100s…%s", len(d), d, d[max(0, len(d)-60):])
	}
	if d := tool(t, reg, "mcp__h__bigraw").Description(); d != "[MCP server h] does bigraw" {
		t.Errorf("a short description changed: %q", d)
	}
	checkOneWarning(t, &buf, "description cut", "mcp-max-tool-description-bytes")
}

// A tool whose input schema is over a bound is left out, and the warning
// names the tool and the setting. Each level of a schema costs more than
// the last in tools.ObjectSchema (a thousand levels took 2 s; the SDK
// refuses more than 1000), so depth is bounded as well as size.
func TestABadInputSchemaLeavesTheToolOut(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    Options
		hostile string
		setting string
	}{
		{"HugeInputSchemaLeavesTheToolOut", Options{MaxSchemaBytes: 10000, Settings: flags}, "bigschema 1000000", "--mcp-max-tool-schema-bytes"},
		{"DeepInputSchemaLeavesTheToolOut", Options{MaxSchemaDepth: 20, Settings: flags}, "deepschema 400", "--mcp-max-tool-schema-depth"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set, _, warnings := connect(t, &tc.opts, hostile(t, tc.hostile))
			if len(warnings) != 1 || !errors.Is(warnings[0], ErrTool) || !strings.Contains(warnings[0].Error(), `tool "bigtext"`) || !strings.Contains(warnings[0].Error(), tc.setting) {
				t.Fatalf("want one warning naming the tool and the setting, got %v", warnings)
			}
			s := set.Servers()
			if len(s) != 1 || len(s[0].Tools) != len(hostileTools)-1 || slices.Contains(s[0].Tools, "mcp__h__bigtext") {
				t.Fatalf("servers %+v", s)
			}
		})
	}
}

func TestHugeStructuredContentIsNotPassedOn(t *testing.T) {
	var buf testkit.SyncBuffer
	_, reg := mustConnect(t, &Options{Logger: logTo(&buf), MaxOutput: 1000, Settings: flags}, hostile(t, ""))
	res := run(t, reg, "mcp__h__bigraw", nil, map[string]any{"n": 5 << 20})
	raw, err := json.Marshal(res.RawOutput)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) > 1000 || res.IsError || !strings.HasPrefix(res.Output, "small text") || !strings.Contains(res.Output, "--mcp-max-output-bytes") {
		t.Errorf("rawOutput of %d bytes, output %.300q", len(raw), res.Output)
	}
	res = run(t, reg, "mcp__h__bigtext", nil, map[string]any{"n": 5000})
	if len(res.Output) > 1200 || !strings.Contains(res.Output, "[output truncated: 1000 of 5000 bytes shown") {
		t.Errorf("output of %d bytes: %.300q", len(res.Output), res.Output)
	}
	checkOneWarning(t, &buf, "mcp tool output cut", "mcp-max-output-bytes")
}

func TestProgressFloodIsThinned(t *testing.T) {
	var buf testkit.SyncBuffer
	const interval = 50 * time.Millisecond
	_, reg := mustConnect(t, &Options{Logger: logTo(&buf), ProgressInterval: interval, Settings: flags}, hostile(t, ""))
	var mu sync.Mutex
	var shown []time.Time
	start := time.Now()
	res, err := runCtx(t.Context(), t, reg, "mcp__h__flood", nil, map[string]any{"n": 5000}, tools.ReporterFunc(func(tools.Progress) {
		mu.Lock()
		shown = append(shown, time.Now())
		mu.Unlock()
	}))
	elapsed := time.Since(start)
	if err != nil || res.Output != "flooded 5000" {
		t.Fatalf("flood: %v %+v", err, res)
	}
	mu.Lock()
	defer mu.Unlock()
	// Updates passed on are at least an interval apart, so no more fit
	// in the call's time than this.
	if most := int(elapsed/interval) + 1; len(shown) == 0 || len(shown) > most {
		t.Errorf("%d of 5000 progress updates shown in %v; at most %d fit", len(shown), elapsed, most)
	}
	checkOneWarning(t, &buf, "progress faster", "mcp-progress-interval")
}

func TestSchemaDepth(t *testing.T) {
	for _, tt := range []struct {
		schema any
		want   int
	}{
		{nil, 0},
		{"x", 0},
		{map[string]any{}, 1},
		{map[string]any{"type": "object"}, 1},
		{map[string]any{"properties": map[string]any{"a": map[string]any{"type": "string"}}}, 3},
		{map[string]any{"anyOf": []any{map[string]any{}, map[string]any{"items": map[string]any{}}}}, 4},
	} {
		if got := schemaDepth(tt.schema, 100); got != tt.want {
			t.Errorf("schemaDepth(%v) = %d, want %d", tt.schema, got, tt.want)
		}
	}
	deep := any(map[string]any{})
	for range 50 {
		deep = map[string]any{"a": deep}
	}
	if got := schemaDepth(deep, 10); got != 11 {
		t.Errorf("a walk past the limit goes on: %d", got)
	}
}

// Two servers whose names sanitize alike ("h." and "h_") would give their
// tools the same names: the tools of the one that registers second take
// the hashed form (the hash is of the raw names) instead of being lost.
func TestServersWhoseNamesSanitizeAlikeKeepTheirTools(t *testing.T) {
	a, b := hostile(t, ""), hostile(t, "")
	a.Name, b.Name = "h.", "h_"
	set, reg := mustConnect(t, nil, a, b)
	s := set.Servers()
	if len(s) != 2 || len(s[0].Tools) != len(hostileTools) || len(s[1].Tools) != len(hostileTools) {
		t.Fatalf("servers %+v", s)
	}
	for _, srv := range s {
		name := hashedName(srv.Name, "bigtext")
		if !slices.Contains(srv.Tools, name) {
			name = toolName(srv.Name, "bigtext")
		}
		if res := run(t, reg, name, nil, map[string]any{"n": 2}); res.IsError || res.Output != "xx" {
			t.Errorf("%s: %+v", name, res)
		}
		if d := tool(t, reg, name).Description(); !strings.HasPrefix(d, "[MCP server "+srv.Name+"]") {
			t.Errorf("%s is not %s's: %q", name, srv.Name, d)
		}
	}
}

func TestACallThatIsNeverAnsweredEndsAtTheCallTimeout(t *testing.T) {
	var buf testkit.SyncBuffer
	_, reg := mustConnect(t, &Options{Logger: logTo(&buf), CallTimeout: 200 * time.Millisecond, Settings: flags}, hostile(t, ""))
	for range 2 {
		res := run(t, reg, "mcp__h__never", nil, nil)
		if !res.IsError || !strings.Contains(res.Output, `"h" did not answer this call of never within 200ms`) || !strings.Contains(res.Output, "--mcp-call-timeout") {
			t.Fatalf("a call never answered: %+v", res)
		}
	}
	if res := run(t, reg, "mcp__h__banner", nil, nil); res.IsError || res.Output != "after the banner" {
		t.Errorf("the server is not usable after a call ran out of time: %+v", res)
	}
	checkOneWarning(t, &buf, "ran out of time", "mcp-call-timeout")
}

// A tool whose input schema no model API takes would fail every request
// of the session: it is left out, with one warning naming the server, the
// tool and the fault; a name the model APIs do not take is changed, with
// a warning naming both.
func TestAnInvalidInputSchemaLeavesTheToolOutAndARenameIsTold(t *testing.T) {
	var buf testkit.SyncBuffer
	set, _, warnings := connect(t, &Options{Logger: logTo(&buf), Settings: flags}, hostile(t, "badschemas"))
	var left []string
	for _, b := range badSchemas {
		if b.fault == "" {
			continue
		}
		left = append(left, b.name)
		var got []string
		for _, w := range warnings {
			if strings.Contains(w.Error(), fmt.Sprintf("tool %q:", b.name)) {
				got = append(got, w.Error())
			}
		}
		if len(got) != 1 || !strings.HasPrefix(got[0], `MCP server "h": `) || !strings.Contains(got[0], b.fault) || !errors.Is(warnings[0], ErrTool) {
			t.Errorf("tool %q: want one warning naming the server and saying %q, got %q", b.name, b.fault, got)
		}
	}
	renamed := `tool "bad name with spaces": offered to the model as mcp__h__bad_name_with_spaces`
	var got []Warning
	for _, w := range warnings {
		if strings.Contains(w.Error(), renamed) {
			got = append(got, w)
		}
	}
	if len(got) != 1 || !errors.Is(got[0], ErrToolRenamed) {
		t.Errorf("want one warning %q, got %v", renamed, warnings)
	}
	if len(warnings) != len(left)+1 {
		t.Errorf("want %d warnings, got %d: %v", len(left)+1, len(warnings), warnings)
	}
	if s := set.Servers(); len(s) != 1 || !slices.Equal(s[0].Tools, []string{"mcp__h__bad_name_with_spaces", "mcp__h__good"}) {
		t.Fatalf("servers %+v, want only the good tools", s)
	}
	if n := len(warnLines(&buf, "mcp tool skipped")); n != len(left) {
		t.Errorf("%d tools skipped logged, want %d:\n%s", n, len(left), buf.String())
	}
	if n := len(warnLines(&buf, "mcp tool renamed")); n != 1 {
		t.Errorf("%d renames logged, want 1:\n%s", n, buf.String())
	}
}
