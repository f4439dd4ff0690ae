//go:build unix

package acpprovider_test

import (
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dshd/dshd/acp/rpc"
	"github.com/dshd/dshd/internal/testkit"
	"github.com/dshd/dshd/subagents"
	acpprovider "github.com/dshd/dshd/subagents/acp"
)

// loggingProvider is newProvider(t, o) with a logger (warnings and up)
// whose lines the test reads.
func loggingProvider(t *testing.T, o acpprovider.Options) (*acpprovider.Provider, *testkit.SyncBuffer) {
	t.Helper()
	logs := &testkit.SyncBuffer{}
	o.Logger = slog.New(slog.NewTextHandler(logs, nil))
	return newProvider(t, &o), logs
}

// checkLoggedOnce checks that the log says what exactly once: a limit
// hit is logged once per peer, not once per time.
func checkLoggedOnce(t *testing.T, logs *testkit.SyncBuffer, what string) {
	t.Helper()
	if n := strings.Count(logs.String(), what); n != 1 {
		t.Errorf("the limit was logged %d times, want once:\n%.2000s", n, logs.String())
	}
}

// A child that sends updates for session ids it never announces gets
// them held for a while (an announcement may follow), but only within a
// bound, and the parent says so once. Before, each new id got a queue of
// its own and the bound of 1024 updates applied only within one queue:
// 2000 updates of 8 KiB for 2000 ids were all held (16 MB), and 4000 of
// 16 KiB 64 MB.
//
// The bytes held are the connection's --max-queued-input-bytes (they are
// messages read and not yet handled), not a constant: a smaller setting
// holds less, and the drop names the setting.
func TestHostile_UpdatesForSessionIdsNeverAnnouncedAreHeldWithinABound(t *testing.T) {
	for _, c := range []struct {
		name       string
		limits     rpc.Limits
		ghosts     string // what the child sends: more than most if all were held
		most       int64
		limitBytes string
	}{
		{"the default queued-input bound", rpc.Limits{}, "ghosts 2000 8192", 10 << 20, "limit_bytes=4194304"},
		{"a 256 KiB queued-input bound", rpc.Limits{MaxQueuedInput: 256 << 10}, "ghosts 500 8192", 2 << 20, "limit_bytes=262144"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, logs := loggingProvider(t, acpprovider.Options{HoldUnknown: time.Hour, Limits: c.limits})
			before := testkit.LiveHeap()
			run, _ := startWatched(t, p, fakeBinding(modeAgent), c.ghosts)
			res := wait(t, run)
			if res.StopReason != subagents.StopCompleted || res.Output != "done" {
				t.Fatalf("result = %+v", res)
			}
			// The child is still connected: what it made the parent hold is held.
			held := testkit.LiveHeap() - before
			t.Logf("%d KiB held", held>>10)
			if held > c.most {
				t.Errorf("the parent holds %d KiB for session ids the child never announced, want at most %d", held>>10, c.most>>10)
			}
			checkLoggedOnce(t, logs, "holding no more updates for session ids the agent has not announced")
			if l := logs.String(); !strings.Contains(l, c.limitBytes) || !strings.Contains(l, "--max-queued-input-bytes") {
				t.Errorf("the drop's log line does not name the bound (%s) and its setting:\n%.2000s", c.limitBytes, l)
			}
		})
	}
}

// The count of updates held for unannounced ids is a setting too
// (--max-held-child-updates): 300 small updates, far under the byte
// bound, are held only up to the 100 the provider was given, and the drop
// names that setting and its limit. Before, the count was a constant of
// 1024: all 300 were held and nothing was said.
func TestHostile_TheCountOfUpdatesHeldForUnannouncedIdsIsTheSetting(t *testing.T) {
	p, logs := loggingProvider(t, acpprovider.Options{HoldUnknown: time.Hour, MaxHeld: 100})
	run, _ := startWatched(t, p, fakeBinding(modeAgent), "ghosts 300 16")
	res := wait(t, run)
	if res.StopReason != subagents.StopCompleted || res.Output != "done" {
		t.Fatalf("result = %+v", res)
	}
	checkLoggedOnce(t, logs, "holding no more updates for session ids the agent has not announced")
	l := logs.String()
	for _, w := range []string{"limit=100 ", "held=100 ", "setting=--max-held-child-updates"} {
		if !strings.Contains(l, w) {
			t.Errorf("the drop's log line lacks %q:\n%.2000s", w, l)
		}
	}
}

// A child that streams one message without end costs the parent a
// bounded amount of memory, and the model reads that the answer was cut.
// Before, the parent kept every byte of it for the run's output (16 MB
// here: 32 MB held with the output string).
func TestHostile_AChildsAnswerIsKeptUpToTheOutputLimitAndSaysItWasCut(t *testing.T) {
	p, logs := loggingProvider(t, acpprovider.Options{MaxOutputBytes: 64 << 10})
	before := testkit.LiveHeap()
	run, _ := startWatched(t, p, fakeBinding(modeAgent), "babble 1000 16384")
	res := wait(t, run)
	held := testkit.LiveHeap() - before
	t.Logf("%d KiB held, output %d bytes", held>>10, len(res.Output))
	if res.StopReason != subagents.StopCompleted {
		t.Fatalf("result = %+v", res)
	}
	if len(res.Output) > 65<<10 || !strings.Contains(res.Output, "the rest of this answer (") {
		t.Errorf("the output is %d bytes and ends %q", len(res.Output), res.Output[max(0, len(res.Output)-200):])
	}
	if held > 8<<20 {
		t.Errorf("the parent holds %d MiB of one answer", held>>20)
	}
	checkLoggedOnce(t, logs, "the agent's answer is over the output limit")
	if !strings.Contains(logs.String(), "setting=--max-child-output-bytes") {
		t.Errorf("the log does not name the setting:\n%.2000s", logs.String())
	}
}

// A child runs terminals on the parent's runner at most MaxTerminals at
// once (the daemon's --max-tasks); one more is refused, saying so, and the
// child hears why. Before, a child the gate let run commands (yolo mode,
// or one "always allow") could start processes in the parent without
// end, each keeping up to 16 MiB of output.
func TestHostile_AChildRunsAtMostMaxTerminalsAtOnce(t *testing.T) {
	p, logs := loggingProvider(t, acpprovider.Options{MaxTerminals: 4})
	parent := newParent(t, parentOpts{gate: &recGate{}, runner: true})
	res := ask(t, p, parent, "terms 10 sleep 30", fakeBinding(modeAgent))
	if !strings.HasPrefix(res.Output, "started=4 refusal=-32600 ") || !strings.Contains(res.Output, "4 terminals") {
		t.Fatalf("answer %q", res.Output)
	}
	checkLoggedOnce(t, logs, "refusing a terminal")
	if !strings.Contains(logs.String(), "setting=--max-tasks") {
		t.Errorf("the log does not name the setting:\n%.2000s", logs.String())
	}
	checkNoProcesses(t)
}

// A terminal a child runs on the parent's runner keeps at most
// MaxTerminalOutput of its output (the daemon's --task-output-limit): the
// child reads the tail, marked truncated, and the parent logs the cut
// once, naming the setting, however many chunks went over it. Before, the
// cap was a constant (1 MiB, up to 16 MiB when the child asked) and a
// cut was said to nobody.
func TestHostile_AChildsTerminalKeepsAtMostMaxTerminalOutputAndTheCutIsLoggedOnce(t *testing.T) {
	const limit = 4096
	p, logs := loggingProvider(t, acpprovider.Options{MaxTerminalOutput: limit})
	parent := newParent(t, parentOpts{gate: &recGate{}, runner: true})
	res := ask(t, p, parent, "term seq 1 30000", fakeBinding(modeAgent)) // 169 KB of output
	var output string
	if _, err := fmt.Sscanf(strings.TrimPrefix(res.Output, "exit=0 output="), "%q", &output); err != nil {
		t.Fatalf("answer %.300q: %v", res.Output, err)
	}
	if len(output) > limit || !strings.HasSuffix(output, "29999\n30000\n") || !strings.HasSuffix(res.Output, " truncated") {
		t.Fatalf("the child read %d bytes of output ending %q, truncated %v; want the last %d at most, marked truncated",
			len(output), output[max(0, len(output)-20):], strings.HasSuffix(res.Output, " truncated"), limit)
	}
	checkLoggedOnce(t, logs, "printed more than the output limit")
	if !strings.Contains(logs.String(), "setting=--task-output-limit limit=4096") {
		t.Errorf("the log does not name the setting and its limit:\n%.2000s", logs.String())
	}
}

// A child's requests are served at most MaxRequests at once: each runs
// on a goroutine of the parent's and may wait (for the user, for a
// session to be announced), so a child that sends them without end would
// otherwise cost the parent a goroutine and its request each, all at
// once. Beyond the bound the parent reads no more of the child's
// messages until one is answered. Before, 3000 requests for unknown
// sessions had 3000 goroutines waiting in the parent at once.
func TestHostile_AChildsRequestsAreServedABoundedNumberAtATime(t *testing.T) {
	p := newProvider(t, &acpprovider.Options{MaxRequests: 8, HoldUnknown: 50 * time.Millisecond})
	base := runtime.NumGoroutine()
	peak := make(chan int, 1)
	stop := make(chan struct{})
	go func() {
		most := 0
		for {
			select {
			case <-stop:
				peak <- most
				return
			default:
			}
			most = max(most, runtime.NumGoroutine())
			runtime.Gosched()
		}
	}()
	run, _ := startWatched(t, p, fakeBinding(modeAgent), "asks 400")
	res := wait(t, run)
	close(stop)
	most := <-peak - base
	t.Logf("answer %q, at most %d goroutines more than before", res.Output, most)
	if res.Output != "map[-32002:400]" {
		t.Errorf("answer %q, want every request refused for its unknown session", res.Output)
	}
	if most > 200 {
		t.Errorf("%d goroutines more at once in the parent, with 8 requests allowed at once", most)
	}
}

// The connection to a child has the daemon's limits (--max-line-bytes and
// the queues), not acp/rpc's defaults: a line over the limit is skipped,
// said once, and the run goes on. Before, a child could send lines of up
// to 64 MiB whatever the daemon was told.
func TestHostile_AChildsLinesAreBoundedByTheDaemonsLineLimit(t *testing.T) {
	p, logs := loggingProvider(t, acpprovider.Options{Limits: rpc.Limits{MaxLineSize: 64 << 10}})
	run, _ := startWatched(t, p, fakeBinding(modeAgent), "bigline 200000")
	res := wait(t, run)
	if res.StopReason != subagents.StopCompleted || res.Output != "done" {
		t.Fatalf("result = %.200q", res.Output)
	}
	if !strings.Contains(logs.String(), "input line too long") {
		t.Errorf("the long line was not said:\n%.2000s", logs.String())
	}
}
