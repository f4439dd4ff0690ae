//go:build linux

// This file holds the abuse tests of issue 10 (findings 1, 2, 4 and 12):
// whatever a peer does — send without reading, hold half a line, connect
// without end, guess the token — a real dshd costs bounded memory, keeps
// accepting, and serves the next client. Memory is read from the kernel
// (the child's peak RSS), never from inside the daemon.

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

// memSlack is how far the peak RSS of the race-enabled test binary may be
// above a plain build's: the race detector's shadow memory and its heap
// overhead. The bounds below are set well above what dshd needs and well
// below what the unbounded daemon reached (GBs).
func memSlack() int64 {
	if raceEnabled {
		return 3
	}
	return 1
}

const mb = 1 << 20

// checkPeakRSS logs a daemon's peak RSS and fails the test when it is
// over limitMB (times memSlack), naming what the daemon went through.
func checkPeakRSS(t testing.TB, peak, limitMB int64, what string) {
	t.Helper()
	limit := limitMB * mb * memSlack()
	t.Logf("peak RSS %.1f MB", float64(peak)/mb)
	if peak > limit {
		t.Errorf("peak RSS %d MB %s, want under %d MB", peak/mb, what, limit/mb)
	}
}

// peakRSS stops a socket daemon (SIGTERM, exit 0) and returns its peak
// resident set size in bytes, as the kernel counted it (VmHWM: the
// peak of the daemon's own memory, see rssWrapped for why not rusage).
func peakRSS(t testing.TB, p *proc) int64 {
	t.Helper()
	peak := vmHWM(t, p)
	p.stop(t)
	return peak
}

func init() { asWrapper = rssWrapper }

// rssWrapper is the wrapper's main: it passes its stdio to the command,
// forwards SIGTERM and SIGINT, takes the command down with it, and exits
// with the command's code.
func rssWrapper() (code int, ok bool) {
	path := os.Getenv(rssFileEnv)
	if path == "" {
		return 0, false
	}
	os.Unsetenv(rssFileEnv)
	// Pdeathsig follows the thread that started the command.
	runtime.LockOSThread()
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "rss wrapper:", err)
		return 127, true
	}
	go func() {
		for sig := range sigs {
			_ = cmd.Process.Signal(sig)
		}
	}()
	_ = cmd.Wait()
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if err := os.WriteFile(path, []byte(strconv.FormatInt(ru.Maxrss<<10, 10)), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "rss wrapper:", err)
		return 127, true
	}
	if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); ws.Signaled() {
		return 128 + int(ws.Signal()), true
	}
	return cmd.ProcessState.ExitCode(), true
}

// rssWrapped returns o set to run dshd under the RSS wrapper, and a
// func that returns dshd's peak RSS in bytes once it exited.
func rssWrapped(t testing.TB, o opts) (opts, func() int64) {
	exe := testkit.Executable(t)
	path := filepath.Join(t.TempDir(), "rss")
	o.prefix = append([]string{exe}, o.prefix...)
	o.env = append(o.env, rssFileEnv+"="+path)
	return o, func() int64 {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("the wrapper wrote no peak RSS: %v", err)
		}
		n, err := strconv.ParseInt(string(b), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
}

// vmHWM returns the peak RSS so far of a running process.
func vmHWM(t testing.TB, p *proc) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// flood writes line over and over to w until total bytes went out or a
// write fails, in batches so the client is never the slow side.
func flood(w io.Writer, line string, total int) (int, error) {
	batch := bytes.Repeat([]byte(line+"\n"), max(1, (64<<10)/(len(line)+1)))
	sent := 0
	for sent < total {
		n, err := w.Write(batch)
		sent += n
		if err != nil {
			return sent, err
		}
	}
	return sent, nil
}

// readsEOF reads nc until the daemon closes (or resets) it and returns
// what it read. A daemon that never closes it fails the test at the hang
// guard, which counts from the first call of a test.
func readsEOF(t testing.TB, nc net.Conn) string {
	t.Helper()
	return readsEOFBefore(guardOf(t), t, nc, "the daemon never closed the connection")
}

// readsEOFBefore is readsEOF that fails the test with failure when ctx
// ends first.
func readsEOFBefore(ctx context.Context, t testing.TB, nc net.Conn, failure string) string {
	t.Helper()
	out := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(nc)
		out <- b
	}()
	select {
	case b := <-out:
		return string(b)
	case <-ctx.Done():
		t.Fatal(failure)
		return ""
	}
}

// waitCount waits until n lines of l hold every one of the words.
func waitCount(ctx context.Context, l *lineLog, n int, words ...string) error {
	for {
		l.mu.Lock()
		lines, ch := l.lines, l.changed
		l.mu.Unlock()
		got := 0
		for _, line := range lines {
			if containsAll(line, words...) {
				got++
			}
		}
		if got >= n {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("%d lines with %q, want %d", got, words, n)
		}
	}
}

var guards sync.Map // testing.TB → context.Context

// guardOf returns one hang-guard context per test.
func guardOf(t testing.TB) context.Context {
	if ctx, ok := guards.Load(t); ok {
		return ctx.(context.Context)
	}
	ctx := testkit.Context(t)
	guards.Store(t, ctx)
	t.Cleanup(func() { guards.Delete(t) })
	return ctx
}

// dialClosing is dialWire for a test that may end without closing the
// connection: it is closed before dialWire's cleanup waits for its end.
func dialClosing(t testing.TB, network, addr string) *wire {
	t.Helper()
	c := dialWire(t, network, addr)
	t.Cleanup(func() { c.closer.Close() })
	return c
}

func dialTCP(t testing.TB, addr string) net.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return nc
}

func TestAClientThatFloodsRequestsAndNeverReadsCostsBoundedMemoryAndOthersAreServed(t *testing.T) {
	p, addr := serveTokenTCP(t, opts{}, "--write-timeout", "1s")
	ctx := testkit.Context(t)
	flooder := dialTCP(t, addr)
	type result struct {
		sent int
		err  error
	}
	done := make(chan result, 1)
	const total = 48 * mb // the unbounded daemon held ~20x this
	go func() {
		n, err := flood(flooder, `{"jsonrpc":"2.0","id":1,"method":"x/unknown"}`, total)
		done <- result{n, err}
	}()

	// While the flood runs, another client is served.
	c := dialClosing(t, "tcp", addr)
	authenticate(ctx, c, daemonToken)
	sid := c.newSession(ctx, t.TempDir())
	if got := c.prompt(ctx, sid, "still served?"); got != "end_turn" {
		t.Fatalf("the second client's prompt ended %q", got)
	}
	c.closer.Close()

	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		t.Fatal("the flood never ended")
	}
	if r.err == nil {
		t.Errorf("the daemon read all %d MB of requests nobody collected the answers to", r.sent/mb)
	}
	if _, err := p.stderr.waitFor(ctx, "pausing its input", "peer", "setting=--max-queued-"); err != nil {
		t.Errorf("the pause was not logged: %v\n%s", err, p.stderr)
	}
	if _, err := p.stderr.waitFor(ctx, "has not read for the write timeout", "peer", "setting=--write-timeout"); err != nil {
		t.Errorf("the stalled connection was not closed: %v\n%s", err, p.stderr)
	}
	// Once per limit: the output queue, the input queue.
	if n := strings.Count(p.stderr.String(), "pausing its input"); n < 1 || n > 2 {
		t.Errorf("the pause was logged %d times, want once per queue\n%s", n, p.stderr)
	}
	checkPeakRSS(t, peakRSS(t, p), 96, "under the flood")
}

func TestAStdioClientThatFloodsRequestsAndNeverReadsCostsBoundedMemory(t *testing.T) {
	o, peak := rssWrapped(t, opts{})
	p := start(t, o, "--model", "scripted", "--state-dir", t.TempDir(), "--write-timeout", "1s")
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}` + "\n"
	if _, err := io.WriteString(p.stdin, init); err != nil {
		t.Fatal(err)
	}
	// Nobody reads p.stdout: the answers pile up on the daemon's side.
	_, err := flood(p.stdin, `{"jsonrpc":"2.0","id":1,"method":"session/list","params":{}}`, 48*mb)
	if err == nil {
		t.Error("the daemon read every request although nobody read an answer")
	}
	p.hangUp(testkit.Context(t))
	if !strings.Contains(p.stderr.String(), "has not read for the write timeout") {
		t.Errorf("the stalled connection was not closed for it:\n%s", p.stderr)
	}
	checkPeakRSS(t, peak(), 96, "under the flood")
}

func TestUnauthenticatedConnectionsHoldingHugePartialLinesAreClosedAndCostLittle(t *testing.T) {
	p, addr := serveTokenTCP(t, opts{})
	const conns, line = 10, 50 * mb
	head := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"x":"`
	var wg sync.WaitGroup
	ncs := make([]net.Conn, conns)
	for i := range ncs {
		ncs[i] = dialTCP(t, addr)
		wg.Go(func() {
			if _, err := io.WriteString(ncs[i], head); err != nil {
				return
			}
			flood(ncs[i], strings.Repeat("x", 1<<16-1), line) // no newline ever
		})
	}
	wg.Wait()
	checkPeakRSS(t, vmHWM(t, p), 64, fmt.Sprintf("with %d partial lines of %d MB", conns, line/mb))
	for _, nc := range ncs {
		// The -32600 saying why goes out first, but the peer is still
		// sending, so the close may reset the connection before it reads it.
		readsEOF(t, nc)
	}
	// Each was closed for its line; the log has one line for them all,
	// the first of the episode (see unauth_flood_test.go), written
	// before the close.
	if got := linesWith(p.stderr, "a line over the limit before authentication", "setting=--preauth-max-line-bytes", "peer"); len(got) != 1 {
		t.Errorf("%d lines for %d connections closed for a line over the limit before authentication, want 1:\n%s", len(got), conns, p.stderr)
	}
	// The daemon still serves.
	c := dialClosing(t, "tcp", addr)
	authenticate(testkit.Context(t), c, daemonToken)
	c.newSession(testkit.Context(t), t.TempDir())
}

// TestAnAcceptedLargePromptCostsAFewCopiesOfIt reads the daemon's Go heap
// from its GC trace rather than its RSS, which the race detector's shadow
// memory inflates out of proportion; make bench reports the RSS.
func TestAnAcceptedLargePromptCostsAFewCopiesOfIt(t *testing.T) {
	size := 50 * mb
	if raceEnabled {
		size = 16 * mb // the same ratio, without a minute of instrumented copying
	}
	script := writeScript(t, `{"rules": [{"text": "ok"}]}`)
	p, addr := serveTokenTCP(t, opts{env: []string{"GODEBUG=gctrace=1"}}, "--model", "scripted:"+script)
	ctx := testkit.Context(t)
	c := dialClosing(t, "tcp", addr)
	authenticate(ctx, c, daemonToken)
	sid := c.newSession(ctx, t.TempDir())
	if got := c.prompt(ctx, sid, strings.Repeat("y", size)); got != "end_turn" {
		t.Fatalf("stop reason %q", got)
	}
	c.closer.Close()
	p.stop(t)
	peak := peakHeap(t, p.stderr.String())
	t.Logf("peak heap %d MB for a %d MB prompt (%.1fx)", peak/mb, size/mb, float64(peak)/float64(size))
	if peak > 8*int64(size) { // the unbounded decoding held 16x
		t.Errorf("a %d MB prompt took the heap to %d MB (%.1fx), want under 8x", size/mb, peak/mb, float64(peak)/float64(size))
	}
}

// peakHeap returns the largest heap a GODEBUG=gctrace=1 log shows at the
// start of a collection ("gc N @...: ... A->B->C MB, ...").
func peakHeap(t testing.TB, log string) int64 {
	t.Helper()
	var peak int64
	for line := range strings.Lines(log) {
		_, rest, ok := strings.Cut(line, " MB, ")
		if !strings.HasPrefix(line, "gc ") || !ok {
			continue
		}
		f := strings.Fields(line[:len(line)-len(rest)-len(" MB, ")])
		a, _, _ := strings.Cut(f[len(f)-1], "->")
		n, err := strconv.ParseInt(a, 10, 64)
		if err != nil {
			t.Fatalf("unreadable GC trace line %q", line)
		}
		peak = max(peak, n*mb)
	}
	if peak == 0 {
		t.Fatal("no GC trace in the daemon's stderr")
	}
	return peak
}

func TestConnectionsThatNeverAuthenticateAreClosedAtTheHandshakeDeadline(t *testing.T) {
	p, addr := serveTokenTCP(t, opts{}, "--handshake-timeout", "1s")
	var ncs []net.Conn
	for range 5 {
		nc := dialTCP(t, addr)
		if _, err := io.WriteString(nc, "{"); err != nil { // one byte, then nothing
			t.Fatal(err)
		}
		ncs = append(ncs, nc)
	}
	for _, nc := range ncs {
		readsEOF(t, nc)
	}
	if _, err := p.stderr.waitFor(testkit.Context(t), "did not authenticate in time", "peer"); err != nil {
		t.Errorf("%v\n%s", err, p.stderr)
	}
	// An authenticated connection is not subject to the deadline.
	c := dialClosing(t, "tcp", addr)
	authenticate(testkit.Context(t), c, daemonToken)
	c.newSession(testkit.Context(t), t.TempDir())
}

func TestIdleSocketConnectionsAreClosed(t *testing.T) {
	p, path := serveUnix(t, "--idle-timeout", "1s")
	nc, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := io.WriteString(nc, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if got := readsEOF(t, nc); !strings.Contains(got, `"protocolVersion":1`) {
		t.Errorf("got %q before the close, want the initialize answer", got)
	}
	if _, err := p.stderr.waitFor(testkit.Context(t), "closing the idle connection", "setting=--idle-timeout", "peer"); err != nil {
		t.Errorf("%v\n%s", err, p.stderr)
	}
}

func TestConnectionsOverTheUnauthenticatedLimitAreRefused(t *testing.T) {
	p, addr := serveTokenTCP(t, opts{}, "--max-unauthenticated", "2")
	ctx := testkit.Context(t)
	first := dialClosing(t, "tcp", addr)
	first.initialize(ctx, nil)
	second := dialClosing(t, "tcp", addr)
	second.initialize(ctx, nil)

	if got := readsEOF(t, dialTCP(t, addr)); !strings.Contains(got, "too many connections waiting to authenticate") {
		t.Fatalf("a third unauthenticated connection got %q, want a refusal", got)
	}
	if _, err := p.stderr.waitFor(ctx, "limit of unauthenticated connections", "setting=--max-unauthenticated", "limit=2", "peer"); err != nil {
		t.Errorf("%v\n%s", err, p.stderr)
	}
	// Once one authenticates, there is room again.
	first.call(ctx, "authenticate", tokenParams(daemonToken), nil)
	third := dialClosing(t, "tcp", addr)
	authenticate(ctx, third, daemonToken)
	third.newSession(ctx, t.TempDir())
}

// prlimit runs dshd with at most soft (and hard) open descriptors.
func prlimit(t testing.TB, soft, hard uint64) []string {
	t.Helper()
	if _, err := exec.LookPath("prlimit"); err != nil {
		t.Skip("needs prlimit(1) (util-linux) to limit the daemon's descriptors")
	}
	return []string{"prlimit", fmt.Sprintf("--nofile=%d:%d", soft, hard), "--"}
}

func TestTheDaemonSurvivesRunningOutOfDescriptors(t *testing.T) {
	p, path := serveUnixPrefixed(t, prlimit(t, 64, 64))
	ctx := testkit.Context(t)
	var hold []net.Conn
	for range 100 { // more than its descriptors
		nc, err := net.Dial("unix", path)
		if err != nil {
			break
		}
		hold = append(hold, nc)
	}
	// The accept failure is logged, or (before the fix) the daemon exits.
	exited, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-p.done:
			stop()
		case <-exited.Done():
		}
	}()
	p.waitLogged(exited, t, "accept failed; retrying")
	for _, nc := range hold {
		nc.Close()
	}
	c := dialClosing(t, "unix", path)
	c.initialize(ctx, nil)
	c.newSession(ctx, t.TempDir())
	c.closer.Close()
	p.stop(t)
}

// serveUnixPrefixed starts a unix socket daemon under a command prefix.
func serveUnixPrefixed(t testing.TB, prefix []string, extra ...string) (*proc, string) {
	t.Helper()
	path := socketPath(t)
	args := append([]string{"serve", "--listen", "unix:" + path, "--model", "scripted", "--state-dir", t.TempDir()}, extra...)
	p := start(t, opts{prefix: prefix}, args...)
	waitListening(t, p)
	return p, path
}

// TestTheSoftFileLimitIsRaisedToTheHardLimit pins what dshd relies on
// instead of calling setrlimit itself: the Go runtime raises the soft
// RLIMIT_NOFILE at start (go.dev/issue/46279). A setrlimit of our own
// would also stop os/exec from giving commands their original limit.
func TestTheSoftFileLimitIsRaisedToTheHardLimit(t *testing.T) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	hard := min(lim.Max, 1<<20)
	if hard <= 256 {
		t.Skipf("the hard limit of open files here is %d; nothing to raise", lim.Max)
	}
	p, _ := serveUnixPrefixed(t, prlimit(t, 256, hard))
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", p.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	var soft, hardSeen string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 6 && f[0] == "Max" && f[1] == "open" {
			soft, hardSeen = f[3], f[4]
		}
	}
	// Go's runtime raises it to one below the hard limit (so that it can
	// tell a later prlimit apart) and gives commands the original back.
	if want := strconv.FormatUint(hard-1, 10); soft != want || hardSeen != strconv.FormatUint(hard, 10) {
		t.Errorf("open files: soft %s, hard %s; want %s and %d", soft, hardSeen, want, hard)
	}
	p.stop(t)
}

func TestATokenShorterThan16CharactersIsRefusedAtStart(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  []string
		args []string
	}{
		{"from DSHD_TOKEN", []string{"DSHD_TOKEN=short-token"}, nil},
		{"from --token-file", nil, []string{"--token-file", testkit.Write(t, t.TempDir(), "token", "short-token\n")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"serve", "--listen", "tcp:127.0.0.1:" + freePort(t), "--model", "scripted", "--state-dir", t.TempDir()}, tc.args...)
			p := start(t, opts{env: tc.env, stdin: strings.NewReader("")}, args...)
			if code := p.wait(testkit.Context(t)); code == 0 || !strings.Contains(p.stderr.String(), "at least 16") {
				t.Fatalf("exit %d; stderr:\n%s", code, p.stderr)
			}
		})
	}
}

func TestTheTokenIsNotTakenFromTheCommandLine(t *testing.T) {
	code, _, stderr := runDshd(t, nil, "serve", "--listen", "tcp:127.0.0.1:"+freePort(t), "--token", daemonToken)
	if code == 0 || !strings.Contains(stderr, "--token: unknown flag") {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
}

func TestFailedAuthenticationsCloseTheConnectionAndRefuseTheSource(t *testing.T) {
	p, addr := serveTokenTCP(t, opts{}, "--auth-penalty", "10m")
	ctx := testkit.Context(t)
	nc := dialTCP(t, addr)
	c := newWire(t, nc, nc, nc)
	c.initialize(ctx, nil)
	for i := range 3 {
		e := c.callFail(ctx, "authenticate", tokenParams(fmt.Sprintf("guess-%d-0123456789", i)))
		if e.Code != -32000 {
			t.Fatalf("guess %d: %v, want -32000", i, e)
		}
	}
	select {
	case <-c.done:
	case <-ctx.Done():
		t.Fatal("the connection stayed open after three wrong tokens")
	}
	if got := readsEOF(t, dialTCP(t, addr)); !strings.Contains(got, "too many failed authentications") {
		t.Fatalf("the source's next connection got %q, want a refusal", got)
	}
	if _, err := p.stderr.waitFor(ctx, "after failed authentications", "setting=--max-auth-failures", "peer"); err != nil {
		t.Errorf("%v\n%s", err, p.stderr)
	}
	if _, err := p.stderr.waitFor(ctx, "refusing connections from a source", "setting=--auth-penalty"); err != nil {
		t.Errorf("%v\n%s", err, p.stderr)
	}
}

// A token socket daemon closes each connection that has not authenticated
// within --handshake-timeout; the first close of an episode is logged with
// the setting and the peer, and the next are not, until a connection
// authenticates. Before, every such connection was a line: a peer
// opening connections without end wrote the log without end.
func TestTheSocketHandshakeTimeoutIsLoggedOnceUntilAConnectionAuthenticates(t *testing.T) {
	p, addr := serveTokenTCP(t, opts{}, "--handshake-timeout", "300ms")
	ctx := guardOf(t)
	words := []string{"did not authenticate in time", "setting=--handshake-timeout", "timeout=300ms"}
	cut := func() string {
		nc := dialTCP(t, addr)
		if _, err := io.WriteString(nc, "{"); err != nil { // one byte, then nothing
			t.Fatal(err)
		}
		readsEOF(t, nc)
		return nc.LocalAddr().String()
	}
	first := cut()
	if _, err := p.stderr.waitFor(ctx, append(words, first)...); err != nil {
		t.Fatalf("%v; stderr:\n%s", err, p.stderr)
	}
	cut()
	cut()
	c := dialClosing(t, "tcp", addr)
	authenticate(ctx, c, daemonToken)
	again := cut()
	if _, err := p.stderr.waitFor(ctx, append(words, again)...); err != nil {
		t.Fatalf("a cut after a connection authenticated: %v; stderr:\n%s", err, p.stderr)
	}
	c.closer.Close()
	p.stop(t)
	if got := linesWith(p.stderr, words...); len(got) != 2 {
		t.Errorf("%d lines name the handshake timeout, want 2 (the first of each episode):\n%s", len(got), strings.Join(got, "\n"))
	}
}
