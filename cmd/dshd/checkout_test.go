//go:build unix

// End-to-end tests of a session on a checkout of its own (session/new's
// _meta "dshd.dev/checkout"): its clone is the session's, checked against
// the disk bounds before it is made, counted in --max-state-bytes, removed
// with a session that is not created or is deleted, bounded in time by
// --checkout-timeout, and a failed clone's error keeps only the end of
// git's output.

package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

// checkoutRepo makes a git repository holding NOTES.txt and, when pad is
// above 0, pad random bytes in pad.bin (random, so git cannot pack them
// smaller), and returns its path.
func checkoutRepo(t *testing.T, pad int) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "NOTES.txt"), []byte("the repository's notes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if pad > 0 {
		b := make([]byte, pad)
		rand.Read(b)
		if err := os.WriteFile(filepath.Join(dir, "pad.bin"), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "--quiet"}, {"add", "."}, {"commit", "--quiet", "-m", "one"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	return dir
}

// checkoutParams are session/new's params for a checkout of repo.
func checkoutParams(repo string) map[string]any {
	p := newParams("/")
	p["_meta"] = map[string]any{"dshd.dev/checkout": map[string]any{"repo": repo}}
	return p
}

// refusedCheckout asks c for a session on a checkout of repo and fails
// the test unless it is refused with an answer whose message and reason
// hold words, and nothing is left under state's sessions/workspaces. It
// returns the answer and its data.reason.
func refusedCheckout(ctx context.Context, t *testing.T, c *wire, state, repo string, words ...string) (e *rpcErr, reason string) {
	t.Helper()
	e = c.callFail(ctx, "session/new", checkoutParams(repo))
	var data struct {
		Reason string `json:"reason"`
	}
	if err := json.Unmarshal(e.Data, &data); err != nil {
		t.Fatalf("the error's data %s: %v", e.Data, err)
	}
	if !containsAll(e.Message+"\n"+data.Reason, words...) {
		t.Fatalf("session/new of a checkout of %s answered %.2000v, want %q", repo, e, words)
	}
	left, err := filepath.Glob(filepath.Join(state, "sessions", "workspaces", "*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Fatalf("the refused session/new (%s) left its checkout behind: %q", e.Message, left)
	}
	return e, data.Reason
}

// checkoutDaemon starts dshd on stdio with the scripted model, state,
// the extra environment env and args, and runs the handshake.
func checkoutDaemon(ctx context.Context, t *testing.T, state string, env []string, args ...string) (*proc, *wire) {
	t.Helper()
	p := start(t, opts{env: env}, append([]string{"--model", "scripted", "--state-dir", state}, args...)...)
	c := stdioWire(p)
	c.initialize(ctx, nil)
	return p, c
}

func TestACheckoutIsNotMadeForASessionTheDiskBoundsRefuse(t *testing.T) {
	ctx := testkit.Context(t)
	repo := checkoutRepo(t, 0)
	state := t.TempDir()
	// No file system has 4 EiB free: the session is refused before
	// anything is cloned.
	_, c := checkoutDaemon(ctx, t, state, nil, "--min-free-disk-bytes", "4611686018427387904")
	refusedCheckout(ctx, t, c, state, repo, "The session was not created", "--min-free-disk-bytes")
}

func TestACheckoutCountsInMaxStateBytesAndGoesWithTheSessionItTookPastIt(t *testing.T) {
	ctx := testkit.Context(t)
	// The clone holds over 64 KiB, the bound is 32 KiB: the state
	// directory is under it before the clone and over it after.
	repo := checkoutRepo(t, 64<<10)
	state, cwd := t.TempDir(), t.TempDir()
	p, c := checkoutDaemon(ctx, t, state, nil, "--max-state-bytes", "32768")
	for range 2 {
		refusedCheckout(ctx, t, c, state, repo, "The session was not created", "--max-state-bytes (32768)")
	}
	if n := strings.Count(p.stderr.String(), "--max-state-bytes"); n != 1 {
		t.Fatalf("two checkouts refused by the bound were logged %d times naming it, want once; stderr:\n%s", n, p.stderr)
	}
	if n := len(journals(t, state)); n != 0 {
		t.Fatalf("the refused session left %d journals", n)
	}
	// Removing it took its bytes off the count: a session without a
	// checkout fits again.
	sid := c.newSession(ctx, cwd)
	c.endTurn(ctx, sid, "hello")
}

func TestADeletedSessionsCheckoutIsGoneAndAClosedOnesStaysForItsLoad(t *testing.T) {
	ctx := testkit.Context(t)
	repo := checkoutRepo(t, 0)
	state := t.TempDir()
	args := []string{"--model", "scripted", "--state-dir", state}
	p := start(t, opts{}, args...)
	c := stdioWire(p)
	c.initialize(ctx, nil)

	// newCheckout makes a session on a checkout and returns it and its
	// cwd, the clone, as session/list tells it.
	newCheckout := func() (sid, dir string) {
		t.Helper()
		var res newResult
		c.call(ctx, "session/new", checkoutParams(repo), &res)
		var list struct {
			Sessions []struct {
				SessionID string `json:"sessionId"`
				Cwd       string `json:"cwd"`
			} `json:"sessions"`
		}
		c.call(ctx, "session/list", map[string]any{}, &list)
		for _, s := range list.Sessions {
			if s.SessionID == res.SessionID {
				dir = s.Cwd
			}
		}
		if b, err := os.ReadFile(filepath.Join(dir, "NOTES.txt")); err != nil || !strings.Contains(string(b), "the repository's notes") {
			t.Fatalf("session %s works in %q, which holds no clone of the repository: %v", res.SessionID, dir, err)
		}
		if want := filepath.Join(state, "sessions", "workspaces", res.SessionID); dir != want {
			t.Fatalf("the checkout is %s, want %s (README: STATE_DIR/sessions/workspaces/<session id>)", dir, want)
		}
		return res.SessionID, dir
	}

	sid, dir := newCheckout()
	c.call(ctx, "session/close", map[string]any{"sessionId": sid}, nil)
	if _, err := os.Stat(filepath.Join(dir, "NOTES.txt")); err != nil {
		t.Fatalf("session/close removed the checkout a load works in: %v", err)
	}
	c.call(ctx, "session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}}, nil)
	c.call(ctx, "session/delete", map[string]any{"sessionId": sid}, nil)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("session/delete left the session's checkout %s: %v", dir, err)
	}

	// `dshd sessions delete` removes it as well.
	sid, dir = newCheckout()
	c.closer.Close()
	if code := p.wait(ctx); code != 0 {
		t.Fatalf("dshd exited %d; stderr:\n%s", code, p.stderr)
	}
	if code, _, stderr := runDshd(t, nil, "sessions", "delete", "--state-dir", state, sid); code != exitOK {
		t.Fatalf("dshd sessions delete %s: exit %d; stderr:\n%s", sid, code, stderr)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("dshd sessions delete left the session's checkout %s: %v", dir, err)
	}
	if left, _ := filepath.Glob(filepath.Join(state, "sessions", "workspaces", "*")); len(left) != 0 {
		t.Fatalf("checkouts left after every session was deleted: %q", left)
	}
}

// fakeGit puts a git first on PATH that runs script (sh) instead, and
// returns the environment entry.
func fakeGit(t *testing.T, script string) string {
	t.Helper()
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte("#!/bin/sh\n"+script+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	return "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")
}

// slowGit puts first on PATH a git that appends its arguments to the
// file starts, puts a file into its clone, says it began on the fifo
// started and then never ends. It returns the environment entry and the
// two paths.
func slowGit(t *testing.T) (env, starts, started string) {
	t.Helper()
	dir := t.TempDir()
	starts = filepath.Join(dir, "starts")
	started = testkit.FIFO(t, dir, "started")
	env = fakeGit(t, `echo "$*" >> `+starts+` && for a; do last=$a; done; mkdir -p "$last" && echo partial > "$last/partial" && mkfifo "$last/fifo" && echo > `+started+` && read x < "$last/fifo"`)
	return env, starts, started
}

// awaitFIFO waits until a child process says on the FIFO at path that
// what happened (a slowGit that it began, say).
func awaitFIFO(t *testing.T, path, what string) {
	t.Helper()
	read := make(chan error, 1)
	go func() { _, err := os.ReadFile(path); read <- err }()
	if err := testkit.Await(t, read, what); err != nil {
		t.Fatal(err)
	}
}

func TestAFailedClonesErrorIsShortAndNamesTheRepository(t *testing.T) {
	ctx := testkit.Context(t)
	state := t.TempDir()
	const repo = "https://git.example/loud.git"
	// A remote that prints a megabyte before it fails.
	env := fakeGit(t, `i=0; while [ $i -lt 16384 ]; do echo "remote: line $i of a remote that does not stop talking"; i=$((i+1)); done; echo "fatal: the last word" >&2; exit 128`)
	_, c := checkoutDaemon(ctx, t, state, []string{env})
	e, reason := refusedCheckout(ctx, t, c, state, repo, "cloning "+repo, "exit code 128", "fatal: the last word")
	if n := len(e.Message) + len(e.Data); n > 5<<10 {
		t.Fatalf("a clone that failed after a megabyte of output answered %d bytes: %.300s … %.300s", n, e.Message, reason[max(0, len(reason)-300):])
	}
}

// A repository URL may carry credentials (https://user:token@host/…):
// neither the answer nor the log shows them, even where git's own output
// repeats the URL, and the clone still gets them.
func TestACheckoutsCredentialsAreInNeitherTheAnswerNorTheLog(t *testing.T) {
	ctx := testkit.Context(t)
	state := t.TempDir()
	got := filepath.Join(t.TempDir(), "args")
	// A git that keeps its arguments and fails naming the URL, as a
	// remote's error may.
	env := fakeGit(t, `echo "$@" > `+got+`; echo "fatal: unable to access '$6': no such host" >&2; exit 128`)
	for _, tc := range []struct{ repo, shown, secret string }{
		{"https://ci-bot:s3cret-t0ken@git.example/private.git", "https://REDACTED@git.example/private.git", "s3cret-t0ken"},
		{"https://ghp_s3cretT0ken@git.example/private.git", "https://REDACTED@git.example/private.git", "ghp_s3cretT0ken"},
	} {
		p, c := checkoutDaemon(ctx, t, state, []string{env})
		e, reason := refusedCheckout(ctx, t, c, state, tc.repo, "cloning "+tc.shown, "fatal: unable to access '"+tc.shown+"'")
		endsOnSIGTERM(ctx, t, p)
		if said := e.Message + string(e.Data) + reason + p.stderr.String(); strings.Contains(said, tc.secret) {
			t.Fatalf("the credentials of %s were shown:\n%s", tc.repo, said)
		}
		if args, err := os.ReadFile(got); err != nil || !strings.Contains(string(args), tc.repo) {
			t.Fatalf("git was not given the URL with its credentials: %q (%v)", args, err)
		}
	}
}

// A connection with every session place taken is refused a checkout
// before the clone starts: the clone would only be removed after it.
func TestACheckoutIsNotClonedForAConnectionWithEverySessionPlaceTaken(t *testing.T) {
	ctx := testkit.Context(t)
	state := t.TempDir()
	ran := filepath.Join(t.TempDir(), "ran")
	env := fakeGit(t, `echo "$@" > `+ran+`; exit 128`)
	p, c := checkoutDaemon(ctx, t, state, []string{env}, "--max-sessions-per-connection", "1")
	c.newSession(ctx, t.TempDir())
	refusedCheckout(ctx, t, c, state, "https://git.example/one-too-many.git", "this connection has 1 sessions open", "--max-sessions-per-connection")
	endsOnSIGTERM(ctx, t, p)
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("git ran for a session the connection had no place for")
	}
}

func TestACloneThatTakesLongerThanCheckoutTimeoutIsStoppedAndSaysSo(t *testing.T) {
	ctx := testkit.Context(t)
	state := t.TempDir()
	// A clone that starts writing and never ends (nobody reads started).
	env, _, _ := slowGit(t)
	p, c := checkoutDaemon(ctx, t, state, []string{env}, "--checkout-timeout", "1s")
	for range 2 {
		refusedCheckout(ctx, t, c, state, "https://git.example/slow.git", "cloning https://git.example/slow.git", "did not finish within --checkout-timeout (1s)")
	}
	if n := strings.Count(p.stderr.String(), "--checkout-timeout"); n != 1 {
		t.Fatalf("two clones past the bound were logged %d times naming it, want once; stderr:\n%s", n, p.stderr)
	}
}

func TestACloneIsStoppedOnceItTakesTheStateDirectoryToMaxStateBytes(t *testing.T) {
	ctx := testkit.Context(t)
	state := t.TempDir()
	// A clone that writes 64 KiB and then never ends: only the bound can
	// stop it before --checkout-timeout.
	env := fakeGit(t, `for a; do last=$a; done; mkdir -p "$last" && head -c 65536 /dev/urandom > "$last/pack" && mkfifo "$last/fifo" && read x < "$last/fifo"`)
	_, c := checkoutDaemon(ctx, t, state, []string{env}, "--max-state-bytes", "32768", "--checkout-timeout", "1h")
	refusedCheckout(ctx, t, c, state, "https://git.example/big.git", "The session was not created", "--max-state-bytes (32768)")
}

func TestTheCheckoutsADaemonFindsCountInMaxStateBytes(t *testing.T) {
	ctx := testkit.Context(t)
	repo := checkoutRepo(t, 64<<10)
	state, cwd := t.TempDir(), t.TempDir()
	// A daemon without the bound makes a session on a 64 KiB checkout.
	p, c := checkoutDaemon(ctx, t, state, nil)
	c.call(ctx, "session/new", checkoutParams(repo), nil)
	c.closer.Close()
	if code := p.wait(ctx); code != 0 {
		t.Fatalf("dshd exited %d; stderr:\n%s", code, p.stderr)
	}
	// The next one, bounded to 32 KiB, counts it when it starts.
	_, c = checkoutDaemon(ctx, t, state, nil, "--max-state-bytes", "32768")
	if e := c.callFail(ctx, "session/new", newParams(cwd)); !containsAll(e.Message, "The session was not created", "--max-state-bytes (32768)") {
		t.Fatalf("session/new with a 64 KiB checkout in the state directory answered %v", e)
	}
}

func TestACloneDoesNotHoldUpTheConnectionAndGoesWithTheClientOrTheDaemon(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(p *proc, c *wire) int
	}{
		{"the client goes away", func(p *proc, c *wire) int { c.closer.Close(); return p.wait(testkit.Context(t)) }},
		{"the daemon is stopped", func(p *proc, c *wire) int { p.signal(syscall.SIGTERM); return p.wait(testkit.Context(t)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testkit.Context(t)
			state, cwd := t.TempDir(), t.TempDir()
			env, _, started := slowGit(t)
			p, c := checkoutDaemon(ctx, t, state, []string{env}, "--checkout-timeout", "1h")
			clone, err := c.start("session/new", checkoutParams("https://git.example/slow.git"))
			if err != nil {
				t.Fatal(err)
			}
			awaitFIFO(t, started, "a clone's start")
			// While it clones, the connection serves the client's other
			// requests.
			c.endTurn(ctx, c.newSession(ctx, cwd), "hello")
			select {
			case m := <-clone:
				t.Fatalf("the clone that never ends was answered: %s %v", m.Result, m.Error)
			default:
			}
			// Its end stops the clone and removes it before dshd exits.
			if code := tc.end(p, c); code != 0 {
				t.Fatalf("dshd exited %d; stderr:\n%s", code, p.stderr)
			}
			if left, _ := filepath.Glob(filepath.Join(state, "sessions", "workspaces", "*")); len(left) != 0 {
				t.Fatalf("the clone is left after %s: %q", tc.name, left)
			}
		})
	}
}

func TestAConnectionsClonesRunOneAtATime(t *testing.T) {
	ctx := testkit.Context(t)
	state, cwd := t.TempDir(), t.TempDir()
	// Each clone writes a line to starts when it begins.
	env, starts, started := slowGit(t)
	p, c := checkoutDaemon(ctx, t, state, []string{env}, "--checkout-timeout", "1h")
	for range 2 {
		if _, err := c.start("session/new", checkoutParams("https://git.example/slow.git")); err != nil {
			t.Fatal(err)
		}
	}
	awaitFIFO(t, started, "a clone's start")
	// Both session/new were dispatched before this turn's.
	c.endTurn(ctx, c.newSession(ctx, cwd), "hello")
	c.closer.Close()
	if code := p.wait(ctx); code != 0 {
		t.Fatalf("dshd exited %d; stderr:\n%s", code, p.stderr)
	}
	b, err := os.ReadFile(starts)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n != 1 {
		t.Fatalf("a connection ran %d clones at once, want one at a time:\n%s", n, b)
	}
	if left, _ := filepath.Glob(filepath.Join(state, "sessions", "workspaces", "*")); len(left) != 0 {
		t.Fatalf("clones left after the client went away: %q", left)
	}
}
