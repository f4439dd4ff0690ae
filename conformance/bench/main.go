// Command bench measures a built dshd end to end and prints a table: cold
// start, peak RSS, the same handshake side by side with a minimal agent on
// the official TypeScript SDK, server overhead per turn, the heap of an
// idle session, the stream's notification rate, and 1,000 sessions on one
// socket daemon. It is a tool that prints figures; it never fails on a
// threshold (the goals column is there to read, not to assert).
//
//	go run ./conformance/bench -dshd ./bin/dshd
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// row is one line of the result table.
type row struct {
	what, value, goal, note string
}

type bench struct {
	dshd, echo, node string
	env              []string
	tmp              string
	rows             []row
	failed           bool
}

func main() {
	var b bench
	flag.StringVar(&b.dshd, "dshd", "bin/dshd", "the dshd binary to measure")
	flag.StringVar(&b.echo, "echo", "conformance/interop/echo-agent.mjs", "the minimal echo agent on the official TypeScript SDK")
	flag.StringVar(&b.node, "node", "node", "the node binary that runs the echo agent")
	spawns := flag.Int("spawns", 50, "cold starts to time")
	handshakes := flag.Int("handshakes", 20, "side-by-side handshakes per agent")
	turns := flag.Int("turns", 5000, "prompt turns for the per-turn overhead")
	idle := flag.Int("idle", 1000, "idle sessions for the heap per session")
	notes := flag.Int("notifications", 1_000_000, "session/update notifications for the stream rate")
	sessions := flag.Int("sessions", 1000, "sessions on one socket daemon")
	flag.Parse()

	abs, err := filepath.Abs(b.dshd)
	if err == nil {
		_, err = os.Stat(abs)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: dshd binary %s: %v (run `make build` first)\n", b.dshd, err)
		os.Exit(2)
	}
	b.dshd = abs
	if b.tmp, err = os.MkdirTemp("", "dshd-bench"); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	defer os.RemoveAll(b.tmp)
	b.env = benchEnv(b.tmp)

	b.coldStart(*spawns)
	b.peakRSS()
	b.sideBySide(*handshakes)
	b.turnOverhead(*turns)
	b.idleHeap(*idle)
	b.streamRate(*notes)
	b.socketSessions(*sessions)
	b.abuse()
	b.print(os.Stdout)
	if b.failed {
		os.Exit(1)
	}
}

// benchEnv keeps user settings and keys away from the measured daemons.
func benchEnv(tmp string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "DSHD_") || strings.HasPrefix(name, "XDG_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "XDG_CONFIG_HOME="+filepath.Join(tmp, "config"), "XDG_STATE_HOME="+filepath.Join(tmp, "state"))
}

func (b *bench) add(what, value, goal, note string) {
	b.rows = append(b.rows, row{what, value, goal, note})
}

// fail records a measurement that could not be taken; the run goes on.
func (b *bench) fail(what string, err error) {
	b.failed = true
	b.add(what, "error", "", err.Error())
	fmt.Fprintf(os.Stderr, "bench: %s: %v\n", what, err)
}

func progress(format string, args ...any) { fmt.Fprintf(os.Stderr, "· "+format+"\n", args...) }

// dshdArgv is dshd on stdio with the offline scripted model.
func (b *bench) dshdArgv(state string) []string {
	return []string{b.dshd, "--model", "scripted", "--state-dir", state, "--log-level", "error"}
}

func (b *bench) coldStart(n int) {
	progress("cold start: %d spawns to the initialize response", n)
	state := filepath.Join(b.tmp, "cold")
	var times []time.Duration
	for range n {
		start := time.Now()
		p, err := startAgent(b.dshdArgv(state), b.env)
		if err != nil {
			b.fail("cold start", err)
			return
		}
		err = p.initialize()
		d := time.Since(start)
		if _, cerr := p.close(); err == nil {
			err = cerr
		}
		if err != nil {
			b.fail("cold start", err)
			return
		}
		times = append(times, d)
	}
	b.add("cold start to initialize response, median", ms(percentile(times, 50)), "< 5 ms", fmt.Sprintf("%d spawns", n))
	b.add("cold start to initialize response, p90", ms(percentile(times, 90)), "", "")
	// What any process costs to start here: the floor under the figures
	// above on a loaded or slow machine.
	if truePath, err := exec.LookPath("true"); err == nil {
		var base []time.Duration
		for range n {
			start := time.Now()
			if err := exec.Command(truePath).Run(); err != nil {
				break
			}
			base = append(base, time.Since(start))
		}
		b.add("  baseline: spawn and exit of "+truePath+", median", ms(percentile(base, 50)), "", "this machine's process start cost")
	}
}

func (b *bench) peakRSS() {
	progress("peak RSS: a daemon with one session after one prompt")
	p, err := startAgent(b.dshdArgv(filepath.Join(b.tmp, "rss")), b.env)
	if err != nil {
		b.fail("peak RSS", err)
		return
	}
	err = p.initialize()
	var sid string
	if err == nil {
		sid, err = p.newSession(b.tmp)
	}
	if err == nil {
		_, _, err = p.prompt(sid, "hello")
	}
	hwm := p.hwmKB()
	maxrss, cerr := p.close()
	if err == nil {
		err = cerr
	}
	if err != nil {
		b.fail("peak RSS", err)
		return
	}
	// wait4's maxrss is not the agent's own: Go starts it with vfork, and
	// the exec records the bench's pages, shared until then, as its peak.
	b.add("peak RSS, one session after one prompt", mib(peakOf(hwm, maxrss)), "< 15 MB", fmt.Sprintf("VmHWM before exit (wait4 maxrss %s counts the bench's own pages through vfork)", mib(maxrss)))
}

// handshake is spawn → initialize → session/new → one prompt → answer.
func (b *bench) handshake(argv []string) (time.Duration, int64, error) {
	start := time.Now()
	p, err := startAgent(argv, b.env)
	if err != nil {
		return 0, 0, err
	}
	err = p.initialize()
	var sid string
	if err == nil {
		sid, err = p.newSession(b.tmp)
	}
	var stop string
	if err == nil {
		stop, _, err = p.prompt(sid, "hello")
	}
	d := time.Since(start)
	hwm := p.hwmKB()
	maxrss, cerr := p.close()
	rss := peakOf(hwm, maxrss)
	if err == nil {
		err = cerr
	}
	if err == nil && stop != "end_turn" {
		err = fmt.Errorf("stop reason %q", stop)
	}
	return d, rss, err
}

func (b *bench) handshakes(name string, argv []string, n int) (time.Duration, int64, bool) {
	progress("handshake side by side: %s, %d runs", name, n)
	var times []time.Duration
	var rss []int64
	for range n {
		d, r, err := b.handshake(argv)
		if err != nil {
			b.fail("handshake "+name, err)
			return 0, 0, false
		}
		times = append(times, d)
		rss = append(rss, r)
	}
	slices.Sort(rss)
	return percentile(times, 50), rss[len(rss)/2], true
}

func (b *bench) sideBySide(n int) {
	dt, drss, ok := b.handshakes("dshd", b.dshdArgv(filepath.Join(b.tmp, "hs")), n)
	if !ok {
		return
	}
	b.add("handshake+turn, dshd (median)", ms(dt), "", "spawn → initialize → session/new → prompt → answer")
	b.add("peak RSS of that run, dshd (median)", mib(drss), "", "")
	why := b.echoMissing()
	if why != "" {
		b.add("handshake+turn, TS SDK echo agent", "skipped", "", why)
		return
	}
	et, erss, ok := b.handshakes("TS SDK echo agent", []string{b.node, b.echo}, n)
	if !ok {
		return
	}
	b.add("handshake+turn, TS SDK echo agent (median)", ms(et), "", filepath.Base(b.echo)+" on node")
	b.add("peak RSS of that run, TS SDK echo agent (median)", mib(erss), "", "")
	b.add("ratio echo agent / dshd: time", fmt.Sprintf("%.1fx", float64(et)/float64(dt)), "", "")
	b.add("ratio echo agent / dshd: peak RSS", fmt.Sprintf("%.1fx", float64(erss)/float64(drss)), "", "")
}

// echoMissing says why the echo agent cannot run, or "".
func (b *bench) echoMissing() string {
	if _, err := os.Stat(b.echo); err != nil {
		return b.echo + " is absent"
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(b.echo), "node_modules", "@agentclientprotocol", "sdk")); err != nil {
		return "node_modules is absent (run `make npm`)"
	}
	if _, err := exec.LookPath(b.node); err != nil {
		return "node is not installed"
	}
	return ""
}

func (b *bench) turnOverhead(n int) {
	progress("server overhead per prompt turn: %d turns in-process", n)
	mean, allocs, err := turnOverhead(filepath.Join(b.tmp, "turns"), b.tmp, n)
	if err != nil {
		b.fail("per-turn overhead", err)
		return
	}
	b.add("server overhead per prompt turn, in-process", us(mean), "< 200 µs",
		fmt.Sprintf("mean of %d turns (%d per session), instant scripted model, client+server over net.Pipe, %d allocs/turn", n, turnsPerSession, allocs))
	if dir := filepath.Join(b.tmp, "turns"); os.MkdirAll(dir, 0o700) == nil {
		if d, err := fsyncCost(dir, 200); err == nil {
			b.add("  context: one write+fsync on this disk", us(d), "", "a turn syncs its journal (fdatasync) at its end")
		}
	}
	// The same on tmpfs, where fsync costs nothing: the server's own share.
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if dir, err := os.MkdirTemp("/dev/shm", "dshd-bench"); err == nil {
			mean, allocs, err := turnOverhead(dir, b.tmp, n)
			os.RemoveAll(dir)
			if err == nil {
				b.add("server overhead per prompt turn, state on tmpfs", us(mean), "< 200 µs",
					fmt.Sprintf("as above with the journals on /dev/shm (no disk sync), %d allocs/turn", allocs))
			}
		}
	}

	progress("prompt turns over stdio: %d turns on a dshd process", n)
	p, err := startAgent(b.dshdArgv(filepath.Join(b.tmp, "turns-proc")), b.env)
	if err != nil {
		b.fail("per-turn over stdio", err)
		return
	}
	defer p.close()
	if err := p.initialize(); err != nil {
		b.fail("per-turn over stdio", err)
		return
	}
	var total time.Duration
	var sid string
	for i := range n {
		if i%turnsPerSession == 0 {
			if sid, err = p.newSession(b.tmp); err != nil {
				b.fail("per-turn over stdio", err)
				return
			}
		}
		start := time.Now()
		if _, _, err := p.prompt(sid, "hello"); err != nil {
			b.fail("per-turn over stdio", err)
			return
		}
		total += time.Since(start)
	}
	b.add("prompt turn over stdio, round trip", us(total/time.Duration(n)), "",
		fmt.Sprintf("mean of %d turns on one dshd process, --model scripted", n))
}

func (b *bench) idleHeap(n int) {
	progress("heap of an idle session: %d sessions in-process", n)
	per, err := idleSessionHeap(filepath.Join(b.tmp, "idle"), b.tmp, n)
	if err != nil {
		b.fail("idle session heap", err)
		return
	}
	b.add("heap of an idle session", fmt.Sprintf("%.1f KB", float64(per)/1000), "< 20 KB", fmt.Sprintf("HeapInuse delta / %d sessions", n))
}

func (b *bench) streamRate(n int) {
	progress("stream: %d session/update notifications to a pipe", n)
	rate, err := streamRate(n)
	if err != nil {
		b.fail("stream rate", err)
		return
	}
	b.add("stream: session/update written to a pipe", fmt.Sprintf("%.0f /s", rate), "≥ 300,000 /s", "rpc.Stream.WriteNotification, text chunks")
}

func (b *bench) print(w io.Writer) {
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "measure\tvalue\tgoal\tnote")
	fmt.Fprintln(tw, "-------\t-----\t----\t----")
	for _, r := range b.rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.what, r.value, r.goal, r.note)
	}
	tw.Flush()
}

// percentile returns the p-th percentile (nearest rank) of ds.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (p*len(s)+99)/100 - 1
	return s[max(0, min(i, len(s)-1))]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }
func us(d time.Duration) string { return fmt.Sprintf("%.1f µs", float64(d)/float64(time.Microsecond)) }
func mib(kib int64) string      { return fmt.Sprintf("%.1f MB", float64(kib)*1024/1e6) }

// peakOf is the agent's own peak RSS: its VmHWM read before it exits,
// else (no /proc) wait4's maxrss.
func peakOf(hwm, maxrss int64) int64 {
	if hwm > 0 {
		return hwm
	}
	return maxrss
}
