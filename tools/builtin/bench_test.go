package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/permission"
	"github.com/dshd/dshd/tools/workspace"
)

// makeTree writes files files of about 1.5 KB each, 100 per directory,
// under dir; every 10,000th file holds the needle.
func makeTree(b *testing.B, dir string, files int) {
	b.Helper()
	var body strings.Builder
	for i := range 40 {
		fmt.Fprintf(&body, "func handler%d(w http.ResponseWriter, r *http.Request) { serve(w, r) }\n", i)
	}
	plain := []byte(body.String())
	for d := range (files + 99) / 100 {
		sub := filepath.Join(dir, fmt.Sprintf("pkg%03d", d/10), fmt.Sprintf("mod%02d", d%10))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range min(100, files-d*100) {
			n := d*100 + f
			content := plain
			if n%10_000 == 0 {
				content = append(append([]byte(nil), plain...), fmt.Sprintf("// needle_%d here\n", n)...)
			}
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("file%02d.go", f)), content, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkGrep100kFiles searches a 100,000-file tree with the grep tool
// and reports GNU grep -rn on the same tree for comparison.
func BenchmarkGrep100kFiles(b *testing.B) {
	dir := b.TempDir()
	makeTree(b, dir, 100_000)
	ws, err := workspace.New(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	env := &tools.Env{Workspace: ws, FS: workspace.NewLocalFS(ws)}
	tool := NewGrep(nil)
	input := json.RawMessage(`{"pattern":"needle_[0-9]+"}`)
	run := func() *tools.Result {
		res, err := tool.Execute(context.Background(), &tools.Call{ID: "b", Input: input, Env: env, Report: tools.Discard})
		if err != nil {
			b.Fatal(err)
		}
		return res
	}
	if res := run(); !strings.Contains(res.Output, "10 matches in 10 files") {
		b.Fatalf("unexpected output: %s", res.Output)
	}

	// GNU grep, single-threaded, on the same (now cached) tree: best of 3.
	var grepTime time.Duration
	if _, err := exec.LookPath("grep"); err == nil {
		for range 3 {
			start := time.Now()
			cmd := exec.Command("grep", "-rnE", "needle_[0-9]+", ".")
			cmd.Dir = dir
			out, err := cmd.Output()
			if err != nil || strings.Count(string(out), "\n") != 10 {
				b.Fatalf("grep -rn: %v: %s", err, out)
			}
			if d := time.Since(start); grepTime == 0 || d < grepTime {
				grepTime = d
			}
		}
	}

	b.ResetTimer()
	start := time.Now()
	n := 0
	for b.Loop() {
		run()
		n++
	}
	ours := time.Since(start) / time.Duration(n)
	if grepTime > 0 {
		b.ReportMetric(float64(grepTime.Nanoseconds()), "grep-rn-ns")
		b.ReportMetric(float64(ours)/float64(grepTime), "x-grep-rn")
	}
}

// overheadTool does nothing of its own but what every built-in tool does
// around its work: decode arguments (tools.Typed), pass the permission
// gate, report progress, return a result.
type overheadTool struct{ tools.Typed[overheadParams] }

type overheadParams struct {
	Path string `json:"path"`
	N    int    `json:"n,omitempty"`
}

func (t *overheadTool) run(ctx context.Context, call *tools.Call, p overheadParams) (*tools.Result, error) {
	if res, err := permit(ctx, call, tools.PermissionRequest{ToolName: t.ToolName, Title: p.Path, Kind: tools.KindEdit, Effect: tools.EffectEdit}); res != nil || err != nil {
		return res, err
	}
	call.Report.Update(tools.Progress{Content: []tools.Content{tools.TextContent("working on " + p.Path)}})
	return &tools.Result{Output: "done " + p.Path}, nil
}

// BenchmarkToolCallOverhead is the cost of a call through the registry and
// Execute, excluding any tool work.
func BenchmarkToolCallOverhead(b *testing.B) {
	r := tools.NewRegistry(tools.NewRegistry(nil))
	for _, t := range Builtins(nil) {
		r.Register(t)
	}
	tool := &overheadTool{}
	tool.Typed = tools.NewTyped(tools.Static{ToolName: "overhead", ToolKind: tools.KindEdit}, tool.run)
	r.Register(tool)
	ws, err := workspace.New(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	env := &tools.Env{Workspace: ws, Permission: permission.NewPolicy(permission.ModeYolo, nil)}
	updates := 0
	rep := tools.ReporterFunc(func(tools.Progress) { updates++ })
	input := json.RawMessage(`{"path":"src/main.go","n":3}`)
	ctx := context.Background()
	for b.Loop() {
		t, ok := r.Get("overhead")
		if !ok {
			b.Fatal("not found")
		}
		res, err := t.Execute(ctx, &tools.Call{ID: "c", Input: input, Env: env, Report: rep})
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkPlanTool is a whole built-in call with the least tool work.
func BenchmarkPlanTool(b *testing.B) {
	ws, err := workspace.New(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	env := &tools.Env{Workspace: ws, Plan: func([]tools.PlanEntry) {}}
	tool := NewPlan()
	input := json.RawMessage(`{"entries":[{"content":"read","priority":"high","status":"completed"},{"content":"write","priority":"medium","status":"in_progress"}]}`)
	for b.Loop() {
		if _, err := tool.Execute(context.Background(), &tools.Call{ID: "c", Input: input, Env: env, Report: tools.Discard}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadFile reads a 2,000-line file through the tool.
func BenchmarkReadFile(b *testing.B) {
	env, dir := testEnv(b)
	var s strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&s, "line %d of some source file with a bit of text\n", i)
	}
	write(b, dir, "f.go", s.String())
	tool := NewReadFile(nil)
	input := json.RawMessage(`{"path":"f.go"}`)
	for b.Loop() {
		res, err := tool.Execute(context.Background(), &tools.Call{ID: "c", Input: input, Env: env, Report: tools.Discard})
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}
