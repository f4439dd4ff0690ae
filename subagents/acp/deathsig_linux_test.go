package acpprovider_test

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func TestDeathSignal_AChildDiesWithAParentKilledBySIGKILL(t *testing.T) {
	// Become the subreaper of this test's orphans, so the child is handed
	// to us when its parent dies and its end can be waited for.
	const prSetChildSubreaper = 36
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		t.Skipf("cannot become a subreaper: %v", errno)
	}
	defer syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 0, 0)

	parent := exec.Command(os.Args[0])
	parent.Env = append(os.Environ(), fakeEnv+"="+modeParent)
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	parent.Stderr = os.Stderr
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
	}()
	text := recv(t, line)
	pid, err := strconv.Atoi(strings.TrimPrefix(text, "child "))
	if err != nil {
		parent.Process.Kill()
		parent.Wait()
		t.Fatalf("the parent said %q", text)
	}
	parent.Process.Signal(syscall.SIGKILL)
	parent.Wait()

	// The parent is reaped, so its orphan is ours now. Should the death
	// signal not come, the child is killed when the test fails.
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	status := make(chan syscall.WaitStatus, 1)
	go func() {
		var ws syscall.WaitStatus
		if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil {
			t.Errorf("wait4(%d): %v", pid, err)
		}
		status <- ws
	}()
	ws := recv(t, status)
	// The death signal kills it; a child that writes to the pipes its dead
	// parent held may get there first through SIGPIPE. Either way it died
	// with its parent, which is the point.
	if !ws.Signaled() || (ws.Signal() != syscall.SIGKILL && ws.Signal() != syscall.SIGPIPE) {
		t.Fatalf("the child ended with %v, want killed by SIGKILL (or SIGPIPE)", ws)
	}
	checkNoProcesses(t)
}
