// End-to-end tests of `dshd serve --listen`: unix sockets (permissions,
// stale files, a second daemon, many clients, 1,000 sessions) and tcp with
// a token.

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

func TestUnixSocketIsCreatedWithMode0600(t *testing.T) {
	p, path := serveUnix(t)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode()&os.ModeSocket == 0 || st.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v, want a socket with 0600", st.Mode())
	}
	ctx := testkit.Context(t)
	c := dialWire(t, "unix", path)
	sid := c.openSession(ctx, t.TempDir())
	c.endTurn(ctx, sid, "hello")
	c.closer.Close()
	p.stop(t)
}

func TestUnixSocketStaleFileIsRemoved(t *testing.T) {
	path := socketPath(t)
	// A socket file nobody listens on, as a crashed daemon leaves it.
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("stale socket not left behind: %v", err)
	}

	p := serveUnixAt(t, path)
	ctx := testkit.Context(t)
	checkServes(ctx, t, "unix", path)
	p.stop(t)
}

func TestUnixSocketSecondDaemonOnALiveSocketRefuses(t *testing.T) {
	first, path := serveUnix(t)
	code, _, stderr := runDshd(t, nil, "serve", "--listen", "unix:"+path, "--model", "scripted", "--state-dir", t.TempDir())
	if code == 0 || !strings.Contains(stderr, "another daemon is listening") {
		t.Fatalf("second daemon: exit %d, stderr:\n%s", code, stderr)
	}
	// The first one still serves.
	ctx := testkit.Context(t)
	checkServes(ctx, t, "unix", path)
	first.stop(t)
}

func TestUnixSocketServesManyConcurrentClientsEachWithItsOwnSessions(t *testing.T) {
	p, path := serveUnix(t)
	ctx := testkit.Context(t)
	const clients, perClient = 8, 3
	type client struct {
		c    *wire
		sids []string
	}
	cs := make([]*client, clients)
	var wg sync.WaitGroup
	errs := make(chan error, clients*perClient*2)
	for i := range cs {
		cs[i] = &client{c: dialWire(t, "unix", path)}
	}
	for i, cl := range cs {
		wg.Go(func() {
			if _, err := cl.c.callErr(ctx, "initialize", map[string]any{"protocolVersion": 1}); err != nil {
				errs <- err
				return
			}
			for j := range perClient {
				raw, err := cl.c.callErr(ctx, "session/new", newParams(t.TempDir()))
				if err != nil {
					errs <- err
					return
				}
				var res newResult
				_ = json.Unmarshal(raw, &res)
				cl.sids = append(cl.sids, res.SessionID)
				raw, err = cl.c.callErr(ctx, "session/prompt", promptParams(res.SessionID, fmt.Sprintf("client %d session %d", i, j)))
				if err != nil {
					errs <- err
					return
				}
				var pr struct{ StopReason string }
				_ = json.Unmarshal(raw, &pr)
				if pr.StopReason != "end_turn" {
					errs <- fmt.Errorf("client %d: stop reason %q", i, pr.StopReason)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}
	for i, cl := range cs {
		mine := map[string]bool{}
		for j, sid := range cl.sids {
			mine[sid] = true
			if got, want := text(cl.c.updates(sid)), fmt.Sprintf("You said: client %d session %d", i, j); got != want {
				t.Errorf("client %d session %d: text %q, want %q", i, j, got, want)
			}
		}
		for _, n := range cl.c.updates("") {
			if !mine[n.SessionID] {
				t.Errorf("client %d received an update of another client's session %s", i, n.SessionID)
			}
		}
	}
	// A session is driven only on the connection that opened it.
	e := cs[0].c.callFail(ctx, "session/prompt", promptParams(cs[1].sids[0], "not mine"))
	if e.Code != -32002 {
		t.Errorf("prompt on another connection's session: %v, want -32002", e)
	}
	for _, cl := range cs {
		cl.c.closer.Close()
	}
	p.stop(t)
}

// memTempDir is a temp dir on tmpfs when there is one: the scale test
// measures the daemon, not the disk's fsync (several per session).
func memTempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "dshd-e2e")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func TestUnixSocketThousandSessions(t *testing.T) {
	path := socketPath(t)
	p := serveIn(t, opts{}, "unix:"+path, memTempDir(t))
	ctx := testkit.Context(t)
	const conns, total = 4, 1000
	cwd := t.TempDir()
	ws := make([]*wire, conns)
	sids := make([][]string, conns)
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for i := range ws {
		ws[i] = dialWire(t, "unix", path)
		wg.Go(func() {
			if _, err := ws[i].callErr(ctx, "initialize", map[string]any{"protocolVersion": 1}); err != nil {
				errs <- err
				return
			}
			for range total / conns {
				raw, err := ws[i].callErr(ctx, "session/new", newParams(cwd))
				if err != nil {
					errs <- err
					return
				}
				var res newResult
				_ = json.Unmarshal(raw, &res)
				sids[i] = append(sids[i], res.SessionID)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	// List them all, page by page, from another connection.
	lister := dialWire(t, "unix", path)
	lister.initialize(ctx, nil)
	listed := map[string]bool{}
	cursor := ""
	pages := 0
	for {
		params := map[string]any{"cwd": cwd}
		if cursor != "" {
			params["cursor"] = cursor
		}
		var res struct {
			Sessions []struct {
				SessionID string `json:"sessionId"`
				Cwd       string `json:"cwd"`
			} `json:"sessions"`
			NextCursor string `json:"nextCursor"`
		}
		lister.call(ctx, "session/list", params, &res)
		pages++
		for _, s := range res.Sessions {
			if listed[s.SessionID] {
				t.Fatalf("session %s listed twice", s.SessionID)
			}
			listed[s.SessionID] = true
		}
		if res.NextCursor == "" {
			break
		}
		if pages > total {
			t.Fatal("pagination does not end")
		}
		cursor = res.NextCursor
	}
	if len(listed) != total || pages < 2 {
		t.Fatalf("listed %d sessions in %d pages, want %d over several pages", len(listed), pages, total)
	}
	for i := range ws {
		for _, sid := range sids[i] {
			if !listed[sid] {
				t.Fatalf("session %s not listed", sid)
			}
		}
	}
	// Prompt a sample, each on its own connection.
	for i := range ws {
		for _, j := range []int{0, len(sids[i]) / 2, len(sids[i]) - 1} {
			sid := sids[i][j]
			if got := ws[i].prompt(ctx, sid, "sample "+strconv.Itoa(j)); got != "end_turn" {
				t.Fatalf("stop reason %q", got)
			}
			if got, want := text(ws[i].updates(sid)), "You said: sample "+strconv.Itoa(j); got != want {
				t.Fatalf("text %q, want %q", got, want)
			}
		}
	}
	for _, w := range append(ws, lister) {
		w.closer.Close()
	}
	p.stop(t)
}

func TestTCPWithToken(t *testing.T) {
	const token = "s3cret-token-0123"
	// Three wrong tokens below must not trip the brake on guessing
	// (TestTCPAuthFailuresCloseTheConnectionAndRefuseTheSource).
	p, port := serveTCP(t, "127.0.0.1", "--token-file", testkit.Write(t, t.TempDir(), "token", token+"\n"), "--max-auth-failures", "10")
	ctx := testkit.Context(t)
	addr := net.JoinHostPort("127.0.0.1", port)

	t.Run("the token auth method is advertised", func(t *testing.T) {
		c := dialWire(t, "tcp", addr)
		init := c.initialize(ctx, nil)
		found := false
		for _, m := range init.AuthMethods {
			found = found || m.ID == "token"
		}
		if !found {
			t.Fatalf("auth methods %+v: no token method", init.AuthMethods)
		}
		c.closer.Close()
	})

	t.Run("every session method before authenticate answers auth_required", func(t *testing.T) {
		c := dialWire(t, "tcp", addr)
		c.initialize(ctx, nil)
		cwd := t.TempDir()
		sid := "s_00000000-0000-0000-0000-000000000000"
		for _, tc := range []struct {
			method string
			params any
		}{
			{"session/new", newParams(cwd)},
			{"session/load", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}},
			{"session/resume", map[string]any{"sessionId": sid, "cwd": cwd}},
			{"session/list", map[string]any{}},
			{"session/delete", map[string]any{"sessionId": sid}},
			{"session/close", map[string]any{"sessionId": sid}},
			{"session/prompt", promptParams(sid, "hi")},
			{"session/set_mode", map[string]any{"sessionId": sid, "modeId": "yolo"}},
			{"session/set_config_option", map[string]any{"sessionId": sid, "configId": "mode", "value": "yolo"}},
		} {
			if e := c.callFail(ctx, tc.method, tc.params); e.Code != -32000 {
				t.Errorf("%s before authenticate: %v, want -32000", tc.method, e)
			}
		}
		c.closer.Close()
	})

	t.Run("a wrong token is rejected", func(t *testing.T) {
		c := dialWire(t, "tcp", addr)
		c.initialize(ctx, nil)
		for _, meta := range []map[string]any{{"dshd.dev/token": "wrong"}, {}, nil} {
			params := map[string]any{"methodId": "token"}
			if meta != nil {
				params["_meta"] = meta
			}
			if e := c.callFail(ctx, "authenticate", params); e.Code != -32000 {
				t.Errorf("authenticate with %v: %v, want -32000", meta, e)
			}
		}
		if e := c.callFail(ctx, "session/new", newParams(t.TempDir())); e.Code != -32000 {
			t.Errorf("session/new after a failed authenticate: %v, want -32000", e)
		}
		c.closer.Close()
	})

	t.Run("after authenticate sessions work", func(t *testing.T) {
		c := dialWire(t, "tcp", addr)
		authenticate(ctx, c, token)
		sid := c.newSession(ctx, t.TempDir())
		c.endTurn(ctx, sid, "over tcp")
		var list struct {
			Sessions []struct{ SessionID string } `json:"sessions"`
		}
		c.call(ctx, "session/list", map[string]any{}, &list)
		if len(list.Sessions) == 0 {
			t.Fatal("session/list is empty after authenticate")
		}
		c.closer.Close()
	})

	t.Run("after logout the open sessions are out of reach too", func(t *testing.T) {
		c := dialWire(t, "tcp", addr)
		authenticate(ctx, c, token)
		sid := c.newSession(ctx, t.TempDir())
		c.call(ctx, "logout", map[string]any{}, nil)
		if e := c.callFail(ctx, "session/new", newParams(t.TempDir())); e.Code != -32000 {
			t.Errorf("session/new after logout: %v, want -32000", e)
		}
		if raw, err := c.callErr(ctx, "session/prompt", promptParams(sid, "still here?")); err == nil {
			t.Errorf("session/prompt after logout answered %s, want -32000", raw)
		} else if e, ok := err.(*rpcErr); !ok || e.Code != -32000 {
			t.Errorf("session/prompt after logout: %v, want -32000", err)
		}
		c.closer.Close()
	})
	p.stop(t)
}

func TestTCPWithoutTokenRefusesToStart(t *testing.T) {
	code, _, stderr := runDshd(t, nil, "serve", "--listen", "tcp:127.0.0.1:"+freePort(t), "--model", "scripted", "--state-dir", t.TempDir())
	if code == 0 || !strings.Contains(stderr, "token") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
}

func TestTCPTokenFromEnvironment(t *testing.T) {
	port := freePort(t)
	p := start(t, opts{env: []string{"DSHD_TOKEN=from-env-0123456789"}}, "serve", "--listen", "tcp:127.0.0.1:"+port, "--model", "scripted", "--state-dir", t.TempDir())
	waitListening(t, p)
	ctx := testkit.Context(t)
	c := dialWire(t, "tcp", "127.0.0.1:"+port)
	authenticate(ctx, c, "from-env-0123456789")
	c.newSession(ctx, t.TempDir())
	c.closer.Close()
	p.stop(t)
}

func TestTCPEmptyHostBindsLoopback(t *testing.T) {
	p, port := serveTCP(t, "", "--token-file", testkit.Write(t, t.TempDir(), "token", "0123456789abcdef"))
	local, err := tcpListenAddrs(p.cmd.Process.Pid)
	if err != nil {
		t.Skipf("cannot read the process's sockets: %v", err)
	}
	n, _ := strconv.Atoi(port)
	want := fmt.Sprintf("0100007F:%04X", n)
	found := false
	for _, a := range local {
		if strings.HasSuffix(a, fmt.Sprintf(":%04X", n)) {
			if a != want {
				t.Fatalf("listening on %s, want %s (127.0.0.1)", a, want)
			}
			found = true
		}
	}
	if !found {
		t.Fatalf("no listening socket on port %s among %v", port, local)
	}
	ctx := testkit.Context(t)
	c := dialWire(t, "tcp", "127.0.0.1:"+port)
	c.initialize(ctx, nil)
	c.closer.Close()
	p.stop(t)
}

// tcpListenAddrs returns the local addresses (hex, as /proc shows them) of
// the IPv4 and IPv6 listening sockets in pid's network namespace.
func tcpListenAddrs(pid int) ([]string, error) {
	var out []string
	for _, f := range []string{"tcp", "tcp6"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, f))
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fields := strings.Fields(line)
			if len(fields) > 3 && fields[3] == "0A" { // LISTEN
				out = append(out, fields[1])
			}
		}
	}
	return out, nil
}

func TestUnixSocketPathHoldingARegularFileIsLeftAlone(t *testing.T) {
	path := testkit.Write(t, testkit.ShortDir(t, "dshd-e2e"), "notes.txt", "precious data\n")
	p := start(t, opts{stdin: strings.NewReader("")}, "serve", "--listen", "unix:"+path, "--model", "scripted", "--state-dir", t.TempDir())
	ctx, cancel := context.WithCancel(testkit.Context(t))
	defer cancel()
	listening := make(chan struct{})
	go func() {
		if _, err := p.stderr.waitFor(ctx, "dshd listening"); err == nil {
			close(listening)
		}
	}()
	select {
	case <-p.done:
	case <-listening:
		p.stop(t)
		t.Errorf("dshd replaced a regular file with its socket")
	case <-ctx.Done():
		t.Fatal("dshd neither exited nor listened")
	}
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "precious data\n" {
		t.Fatalf("the file at the socket path was removed or changed: %v; stderr:\n%s", err, p.stderr)
	}
}

func TestSocketDaemonSIGTERMCancelsTurnsOfConnectedClientsAndExitsZero(t *testing.T) {
	ctx := testkit.Context(t)
	script := writeScript(t, hangScript)
	p, path := serveUnix(t, "--model", "scripted:"+script)
	a, b := dialWire(t, "unix", path), dialWire(t, "unix", path)
	_, answerA := hangingTurn(ctx, t, a, t.TempDir())
	_, answerB := hangingTurn(ctx, t, b, t.TempDir())
	p.signal(syscall.SIGTERM)
	for _, ch := range []<-chan *msg{answerA, answerB} {
		if got := stopReason(ctx, t, ch); got != "cancelled" {
			t.Fatalf("stop reason %q, want cancelled", got)
		}
	}
	if code := p.wait(ctx); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the socket file outlived the daemon: %v", err)
	}
}
