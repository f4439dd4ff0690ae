//go:build linux

package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshd/dshd/acp/remote"
	"github.com/dshd/dshd/internal/testkit"
)

// BenchmarkRemote_ThousandWebSocketSessions holds 1,000 WebSocket
// connections to one daemon at once, each with a session and one prompt
// turn on the scripted model, all turns in flight together. It reports the
// turn latency's p50 and p99 as the clients see it and the daemon's peak
// RSS.
func BenchmarkRemote_ThousandWebSocketSessions(b *testing.B) {
	const n = 1000
	for b.Loop() {
		// The journals go to memory where it can: the figure is the
		// daemon's, not the disk's (each turn ends with an fdatasync).
		state := b.TempDir()
		if dir, err := os.MkdirTemp("/dev/shm", "dshd-bench-"); err == nil {
			b.Cleanup(func() { os.RemoveAll(dir) })
			state = dir
		}
		p := start(b, opts{}, "serve", "--listen", "http://127.0.0.1:0", "--model", "scripted", "--state-dir", state)
		line, err := p.stderr.waitFor(testkit.Context(b), "dshd listening")
		if err != nil {
			b.Fatal(err)
		}
		u := "ws" + strings.TrimPrefix(regexp.MustCompile(`addr=(\S+)`).FindStringSubmatch(line)[1], "http")
		ctx := testkit.Context(b)
		wires := make([]*wire, n)
		sids := make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				rwc, err := remote.Dial(ctx, u, nil)
				if err != nil {
					b.Error(err)
					return
				}
				w := newWire(b, rwc, rwc, rwc)
				w.initialize(ctx, nil)
				wires[i], sids[i] = w, w.newSession(ctx, b.TempDir())
			})
		}
		wg.Wait()
		if b.Failed() {
			return
		}
		lat := make([]time.Duration, n)
		startAll := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-startAll
				t0 := time.Now()
				if stop := wires[i].prompt(ctx, sids[i], "hello"); stop != "end_turn" {
					b.Errorf("stop %q", stop)
				}
				lat[i] = time.Since(t0)
			})
		}
		close(startAll)
		wg.Wait()
		rss := float64(vmHWM(b, p)) / (1 << 20)
		for _, w := range wires {
			w.closer.Close()
			<-w.done
		}
		p.stop(b)
		slices.Sort(lat)
		b.ReportMetric(float64(lat[n/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[n*99/100].Microseconds())/1000, "p99-ms")
		b.ReportMetric(rss, "peak-RSS-MB")
	}
}
