package sandbox

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dshd/dshd/internal/testkit"
	"github.com/dshd/dshd/tools/internal/tooltest"
	"github.com/dshd/dshd/tools/subproc"
)

// awaitEnd waits, on a pidfd, until pid has ended.
func awaitEnd(t *testing.T, pid int) {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return // already gone
	}
	defer unix.Close(fd)
	tooltest.Within(t, "the end of pid "+strconv.Itoa(pid), func() {
		for !testkit.Ended(pid) {
			_, _ = unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 1000)
		}
	})
}

func TestLifetime_NothingACommandStartedOutlivesAParentKilledBySIGKILL(t *testing.T) {
	for _, mode := range []string{"ns", "plain"} {
		t.Run(mode, func(t *testing.T) {
			parent := exec.Command(exe(t), "parent", mode)
			out, err := parent.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			parent.Stderr = os.Stderr
			if err := parent.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = parent.Process.Kill(); _ = parent.Wait() })
			lines := bufio.NewScanner(out)
			var ready, helper bool
			tooltest.Within(t, "the command to start", func() {
				for !(ready && helper) && lines.Scan() {
					ready = ready || lines.Text() == "ready"
					helper = helper || strings.HasPrefix(lines.Text(), "helper ")
				}
			})
			if !ready || !helper {
				t.Fatalf("the parent did not start its command")
			}
			// The helper, sh and its two children (forked, if perhaps
			// not yet sleep).
			procs := subproc.Descendants(parent.Process.Pid)
			if len(procs) != 4 {
				t.Fatalf("the parent has %d descendants, want 4: %v", len(procs), procs)
			}
			if err := parent.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = parent.Wait()
			for _, p := range procs {
				awaitEnd(t, p)
			}
		})
	}
}

func TestLifetime_LeftoversEndWithTheCommandAndWithCancel(t *testing.T) {
	for _, noNS := range []bool{false, true} {
		s := newSandbox(t, Config{Mode: Off, NoNamespaces: noNS})
		// The background sleep holds the output open: EOF (the end of
		// Wait) means it is gone.
		r := sh(t, s, "", nil, `sleep 300 & echo $!`)
		if r.err != nil || r.st.Code != 0 {
			t.Fatalf("%v %+v %s", r.err, r.st, r.out)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(r.out))
		if err != nil {
			t.Fatalf("the command said %q", r.out)
		}
		if !noNS {
			continue // that pid is the namespace's, not ours
		}
		if !testkit.Ended(pid) {
			t.Fatalf("the background sleep %d survived its command", pid)
		}
	}
}
