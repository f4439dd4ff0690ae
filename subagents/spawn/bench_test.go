package spawn_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/subagents/spawn"
	st "github.com/dshd/dshd/subagents/subagenttest"
)

// BenchmarkSpawnToFirstModelCall measures the time from calling Start to
// the child's first model call (target: under 50µs), reported as
// ns/first-call; the child's turn and its disposal are off the clock.
func BenchmarkSpawnToFirstModelCall(b *testing.B) {
	called := make(chan time.Time, 1)
	p := st.NewParent(b, st.ParentOptions{Model: st.Model(func(context.Context, *llm.Request) st.Reply {
		called <- time.Now()
		return st.Reply{Text: "ok"}
	})})
	p.Service.RegisterProvider(spawn.New(nil))
	req := subagents.StartRequest{Prompt: "task", Parent: p.Scope}
	ctx := context.Background()
	var total time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		run, err := p.Service.Start(ctx, spawn.Name, req)
		if err != nil {
			b.Fatal(err)
		}
		run.Wait(ctx) // the turn begins with the owner's Wait
		total += (<-called).Sub(t0)
		run.Dispose()
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "ns/first-call")
}

// BenchmarkIdleChildHeap measures the live heap an idle child holds: one
// that finished a short task and was not disposed (target: under 64 KB).
func BenchmarkIdleChildHeap(b *testing.B) {
	const n = 1000
	p := st.NewParent(b, st.ParentOptions{})
	p.Service.RegisterProvider(spawn.New(nil))
	req := subagents.StartRequest{Prompt: "task", Parent: p.Scope}
	ctx := context.Background()
	for range b.N {
		runs := make([]subagents.Run, 0, n)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for range n {
			run, err := p.Service.Start(ctx, spawn.Name, req)
			if err != nil {
				b.Fatal(err)
			}
			run.Wait(ctx)
			runs = append(runs, run)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "heap-B/child")
		for _, r := range runs {
			r.Dispose()
		}
	}
}

// BenchmarkTenThousandConcurrentChildren starts 10,000 spawn runs at once
// on a trivial model and waits for all of them.
func BenchmarkTenThousandConcurrentChildren(b *testing.B) {
	const n = 10_000
	release := make(chan struct{})
	p := st.NewParent(b, st.ParentOptions{Model: st.Model(func(_ context.Context, req *llm.Request) st.Reply {
		return st.Reply{Block: release, Text: "ok"}
	})})
	p.Service.RegisterProvider(spawn.New(nil))
	req := subagents.StartRequest{Prompt: "task", Parent: p.Scope}
	ctx := context.Background()
	for range b.N {
		b.StopTimer()
		release = make(chan struct{})
		b.StartTimer()
		runs := make([]subagents.Run, n)
		for i := range runs {
			run, err := p.Service.Start(ctx, spawn.Name, req)
			if err != nil {
				b.Fatal(err)
			}
			runs[i] = run
		}
		if live := p.Registry.Len(); live != n+1 {
			b.Fatalf("%d live agents, want %d", live, n+1)
		}
		close(release)
		var wg sync.WaitGroup
		for _, r := range runs {
			wg.Go(func() {
				if res, err := r.Wait(ctx); err != nil || res.StopReason != subagents.StopCompleted {
					b.Errorf("run ended %v %v", res.StopReason, err)
				}
				r.Dispose()
			})
		}
		wg.Wait()
	}
}
