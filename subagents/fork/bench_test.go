package fork_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/subagents/fork"
	st "github.com/dshd/dshd/subagents/subagenttest"
)

// BenchmarkForkStart measures Start alone at several parent lengths: the
// child's turn is held at its system prompt, so the model request (which
// does copy the log) is not part of it. The 100,000 figure should stay
// within 2x of the 10 figure.
func BenchmarkForkStart(b *testing.B) {
	for _, n := range []int{10, 1_000, 100_000} {
		b.Run(fmt.Sprintf("parent=%d", n), func(b *testing.B) {
			p := setup(b, st.ParentOptions{History: history(n), SystemFunc: func(ctx context.Context) (string, error) {
				<-ctx.Done()
				return "", ctx.Err()
			}})
			req := subagents.StartRequest{Prompt: "x", Parent: p.Scope}
			// Children are disposed in batches, off the clock, so thousands
			// of parked children do not weigh on the figure.
			runs := make([]subagents.Run, 0, 512)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				run, err := p.Service.Start(context.Background(), fork.Name, req)
				if err != nil {
					b.Fatal(err)
				}
				runs = append(runs, run)
				if len(runs) == cap(runs) {
					b.StopTimer()
					disposeAll(runs)
					runs = runs[:0]
					b.StartTimer()
				}
			}
			b.StopTimer()
			disposeAll(runs)
		})
	}
}

func disposeAll(runs []subagents.Run) {
	for _, r := range runs {
		r.Dispose()
	}
}
