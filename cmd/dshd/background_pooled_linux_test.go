// End-to-end test of a background acp child on a socket daemon (a pooled
// connection): released after the idle time, continued on a new
// connection through the daemon's session/resume.

package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/dshd/dshd/internal/testkit"
)

// journalCloses watches dir for journal files closed after writing: a
// daemon closes a session's journal when the session is freed.
type journalCloses struct {
	t   *testing.T
	dir string
	fd  int
}

func watchJournalCloses(t *testing.T, dir string) *journalCloses {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		t.Skipf("no inotify: %v", err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_CLOSE_WRITE); err != nil {
		t.Fatalf("inotify watch: %v", err)
	}
	return &journalCloses{t: t, dir: dir, fd: fd}
}

// next waits for the next journal closed and returns its file name. The
// poll's timeout only lets it see ctx end.
func (w *journalCloses) next(ctx context.Context) string {
	w.t.Helper()
	buf := make([]byte, 4096)
	for {
		n, err := unix.Read(w.fd, buf)
		for off := 0; err == nil && off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+int(ev.Len)]), "\x00")
			off += unix.SizeofInotifyEvent + int(ev.Len)
			if strings.HasSuffix(name, ".jsonl") {
				return name
			}
		}
		if ctx.Err() != nil {
			w.t.Fatalf("no journal in %s was closed", w.dir)
		}
		if _, err := unix.Poll([]unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}}, 1000); err != nil && !errors.Is(err, unix.EINTR) {
			w.t.Fatalf("poll: %v", err)
		}
	}
}

func TestBackground_AReleasedPooledACPChildIsContinuedOnANewConnectionThroughSessionResume(t *testing.T) {
	ctx := testkit.Context(t)
	srv := fakeModel(t)
	s := &continueScript{tool: "bgacp", more: "more"}
	srv.Handle(s.handle)
	// The socket daemon the child lives in. Its idle timeout drops the
	// pooled connection once the child was let go, so the continue has to
	// dial a new one.
	daemonState, sock := t.TempDir(), socketPath(t)
	daemonSessions := filepath.Join(daemonState, "sessions")
	closes := watchJournalCloses(t, daemonSessions)
	daemon := start(t, opts{}, append([]string{"serve", "--listen", "unix:" + sock}, daemonArgs(srv, daemonState, "--idle-timeout", "1s")...)...)
	waitListening(t, daemon)

	stateDir := t.TempDir()
	p, w, sid := bgDaemon{srv: srv, stateDir: stateDir, args: []string{"--subagent", "bgacp=acp,address=unix:" + sock + ",background", "--task-idle-release", "1ms"}}.open(ctx, t, t.TempDir())
	w.prompt(ctx, sid, "start")
	journal := journalPath(stateDir, sid)
	waitJournal(ctx, t, journal, `"k":"task"`, `"id":"t1"`, `"state":"completed"`)

	// The idle time is over at once: the parent lets go of the child's
	// session, which the daemon frees (closing its journal) while the
	// connection is still open (the daemon logs the idle close before it
	// closes anything).
	released := closes.next(ctx)
	if strings.Contains(daemon.stderr.String(), "closing the idle connection") {
		t.Fatalf("the child's session was freed by the idle close, not let go of by the parent; daemon stderr:\n%s", daemon.stderr)
	}
	childSession := strings.TrimSuffix(released, ".jsonl")
	if _, err := daemon.stderr.waitFor(ctx, "closing the idle connection"); err != nil {
		t.Fatalf("%v\n%s", err, daemon.stderr)
	}

	w.prompt(ctx, sid, "more")
	waitContinued(ctx, t, journal, "t1", &s.rec, p.stderr, daemon.stderr)
	// The continue went on in the same session of the daemon: it holds one
	// journal, the released one, and the new turn is in it.
	entries, err := os.ReadDir(daemonSessions)
	if err != nil {
		t.Fatal(err)
	}
	var journals []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".jsonl") {
			journals = append(journals, e.Name())
		}
	}
	if len(journals) != 1 || journals[0] != released {
		t.Fatalf("daemon journals %q, want only the released child's %q", journals, released)
	}
	waitJournal(ctx, t, journalPath(daemonState, childSession), "CHILD-ANSWER-2")
}
