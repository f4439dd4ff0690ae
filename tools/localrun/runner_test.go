//go:build unix

package localrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/sandbox"
)

// testSandbox is the default sandbox with the caches in a temp dir; where
// the kernel has no Landlock, commands run unconfined (these tests are
// about running commands; confinement is tested where it is needed).
func testSandbox(t testing.TB) *sandbox.Sandbox {
	t.Helper()
	s, err := sandbox.New(&sandbox.Config{Caches: []string{t.TempDir()}, Fallback: sandbox.Unconfined, Grace: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// testRunner runs commands through the sandbox's helper.
func testRunner(t testing.TB) *Runner {
	return New(&Options{KillGrace: 300 * time.Millisecond, Sandbox: testSandbox(t)})
}

func TestLocalRunnerExitStatus(t *testing.T) {
	for _, r := range []*Runner{testRunner(t), New(&Options{KillGrace: 300 * time.Millisecond})} {
		exitStatus(t, r)
	}
}

func exitStatus(t *testing.T, r *Runner) {
	dir := t.TempDir()
	tests := []struct {
		name     string
		cmd      tools.Command
		code     int // -1: killed by a signal
		signal   string
		contains string
	}{
		{"success", tools.Command{Command: "true"}, 0, "", ""},
		{"a non-zero exit", tools.Command{Command: "exit 3"}, 3, "", ""},
		{"stdout and stderr are merged", tools.Command{Command: "echo out; echo err >&2"}, 0, "", "out\nerr\n"},
		{"a program with args", tools.Command{Command: "sh", Args: []string{"-c", "echo $0 $1; exit 4", "a", "b"}}, 4, "", "a b\n"},
		{"dir and extra env", tools.Command{Command: `echo "$DSHD_X"; pwd`, Dir: dir, Env: []string{"DSHD_X=hello"}}, 0, "", "hello\n" + dir + "\n"},
		{"death by a signal", tools.Command{Command: "kill -KILL $$"}, -1, "SIGKILL", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := r.Run(t.Context(), tc.cmd, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.code >= 0 && (res.ExitCode == nil || *res.ExitCode != tc.code) {
				t.Errorf("exit code = %v, want %d", res.ExitCode, tc.code)
			}
			if tc.code < 0 && (res.ExitCode != nil || res.Signal != tc.signal) {
				t.Errorf("exit = %v, signal %q; want signal %s", res.ExitCode, res.Signal, tc.signal)
			}
			if !strings.Contains(res.Output, tc.contains) {
				t.Errorf("output %q does not contain %q", res.Output, tc.contains)
			}
		})
	}
	t.Run("a program that does not exist is an error", func(t *testing.T) {
		if _, err := r.Run(t.Context(), tools.Command{Command: "/no/such/program", Args: []string{"x"}}, nil, nil); err == nil {
			t.Fatal("no error")
		}
	})
}

func TestLocalRunnerStreamsOutputBeforeExit(t *testing.T) {
	r := testRunner(t)
	flag := filepath.Join(t.TempDir(), "go-on")
	first := make(chan struct{})
	done := make(chan tools.CommandResult, 1)
	var seen strings.Builder
	signalled := false
	go func() {
		res, err := r.Run(t.Context(), tools.Command{
			Command: `echo first; while [ ! -e "$FLAG" ]; do sleep 0.01; done; echo second`,
			Env:     []string{"FLAG=" + flag},
		}, nil, func(chunk string) {
			seen.WriteString(chunk)
			if strings.Contains(seen.String(), "first\n") && !signalled {
				close(first)
				signalled = true
			}
		})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	await(t, first, "the first line while the command runs")
	select {
	case <-done:
		t.Fatal("the command finished before it was allowed to")
	default:
	}
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res := await(t, done, "the command to finish")
	if res.Output != "first\nsecond\n" {
		t.Errorf("output = %q", res.Output)
	}
}

// gone reports whether pid has exited or is exiting: it no longer exists,
// is a zombie (where nobody reaps orphans), or has its exit code set (the
// kernel has it in do_exit; its files, our pipe among them, are closed).
func gone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) != nil
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return f[0] == "Z" || f[0] == "X" || f[len(f)-1] != "0"
}

// pidFrom reads the first line of output as a pid, as the commands below
// print it.
func pidFrom(t *testing.T, out string) int {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(out, "\n", 2)[0]))
	if err != nil {
		t.Fatalf("no pid in output %q", out)
	}
	return pid
}

// hostPid prints the pid of the shell running it as this test sees it:
// inside the sandbox's PID namespace $$ and $! are the namespace's
// numbers, but /proc is the test's (read's redirect is opened by the shell
// itself, so /proc/self is that shell).
const hostPid = `read pid rest </proc/self/stat; echo $pid`

// background starts a sleep in the background that writes its pid to the
// file pid, waits for the file and prints it; prefix comes before the sh.
func background(prefix string) string {
	return prefix + `sh -c '` + hostPid + ` >pid.tmp; mv pid.tmp pid; exec sleep 1000' >/dev/null 2>&1 &
		while [ ! -e pid ]; do sleep 0.01; done; cat pid`
}

func TestLocalRunnerTimeoutKillsTheProcessGroup(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("checks processes through /proc")
	}
	r := testRunner(t)
	tests := []struct{ name, cmd string }{
		{"a grandchild that sleeps", `sh -c '` + hostPid + `; exec sleep 1000' & wait`},
		{"a grandchild that ignores SIGTERM", `sh -c 'trap "" TERM; ` + hostPid + `; exec sleep 1000' & wait`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pids := make(chan int, 1)
			// The timeout must leave the command time to start and print
			// the pid even on a loaded machine.
			res, err := r.Run(t.Context(), tools.Command{Command: tc.cmd, Timeout: time.Second}, nil, func(chunk string) {
				select {
				case pids <- pidFrom(t, chunk):
				default:
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			var pid int
			select {
			case pid = <-pids:
			default:
				t.Fatalf("the command printed no pid before its timeout: %+v", res)
			}
			if !res.TimedOut {
				t.Errorf("TimedOut = false; result %+v", res)
			}
			if !gone(pid) {
				b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
				syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("grandchild %d survived the timeout: %s %+v", pid, b, res)
			}
		})
	}
}

func TestLocalRunnerCancelKillsTheProcessGroup(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("checks processes through /proc")
	}
	r := testRunner(t)
	ctx, cancel := context.WithCancel(t.Context())
	pids := make(chan int, 1)
	res, err := r.Run(ctx, tools.Command{Command: `sh -c '` + hostPid + `; exec sleep 1000' & wait`}, nil, func(chunk string) {
		pids <- pidFrom(t, chunk)
		cancel()
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if res.TimedOut {
		t.Error("a cancel is not a timeout")
	}
	if pid := await(t, pids, "the pid"); !gone(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("grandchild %d survived the cancel", pid)
	}
}

func TestLocalRunnerLeavesNoBackgroundProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("checks processes through /proc")
	}
	cases := []struct{ name, prefix string }{
		{"in its group", ""},
		{"escaped to a session of its own", "setsid "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			res, err := testRunner(t).Run(t.Context(), tools.Command{Command: background(tc.prefix), Dir: dir, Roots: []string{dir}}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode == nil || *res.ExitCode != 0 {
				t.Errorf("exit = %v: %s", res.ExitCode, res.Output)
			}
			if pid := pidFrom(t, res.Output); !gone(pid) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("background process %d outlived its command", pid)
			}
		})
	}
}

func TestLocalRunnerWithoutASandboxDoesNotWaitForAnEscapedProcess(t *testing.T) {
	r := New(&Options{KillGrace: 300 * time.Millisecond})
	// setsid leaves the group (so it is not killed) but keeps the output
	// pipe open; Run must still return.
	dir := t.TempDir()
	res, err := r.Run(t.Context(), tools.Command{Command: `setsid sh -c '` + hostPid + ` >pid.tmp; mv pid.tmp pid; exec sleep 1000' &
		while [ ! -e pid ]; do sleep 0.01; done; cat pid`, Dir: dir}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	pid := pidFrom(t, res.Output)
	syscall.Kill(pid, syscall.SIGKILL)
}

func TestLocalRunnerCapsHugeOutput(t *testing.T) {
	r := testRunner(t)
	const limit = 64 << 10
	huge := func(mib int) tools.Command {
		return tools.Command{Command: fmt.Sprintf("dd if=/dev/zero bs=1M count=%d status=none; echo END", mib), OutputLimit: limit}
	}
	t.Run("3 GiB of output keeps the tail in bounded memory", func(t *testing.T) {
		mib := 3 << 10
		if raceEnabled {
			mib = 512 // the race detector checks every copied byte
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		res, err := r.Run(t.Context(), huge(mib), nil, nil)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Truncated || len(res.Output) != limit || !strings.HasSuffix(res.Output, "\x00END\n") {
			t.Fatalf("truncated=%v len=%d tail=%q", res.Truncated, len(res.Output), res.Output[max(0, len(res.Output)-8):])
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
			t.Errorf("%d MiB of output allocated %d bytes", mib, alloc)
		}
	})
	t.Run("every byte reaches the stream", func(t *testing.T) {
		mib := 256
		if raceEnabled {
			mib = 64
		}
		var n int64
		res, err := r.Run(t.Context(), huge(mib), nil, func(chunk string) { n += int64(len(chunk)) })
		if err != nil {
			t.Fatal(err)
		}
		if want := int64(mib<<20 + 4); n != want || res.ExitCode == nil || *res.ExitCode != 0 {
			t.Errorf("streamed %d bytes (want %d), exit %v", n, want, res.ExitCode)
		}
	})
}

func TestTailBuffer(t *testing.T) {
	tests := []struct {
		name   string
		limit  int
		writes []string
		want   string
		trunc  bool
	}{
		{"under the limit", 8, []string{"abc", "de"}, "abcde", false},
		{"exactly the limit", 4, []string{"ab", "cd"}, "abcd", false},
		{"wrapping keeps the tail", 4, []string{"abc", "def", "g"}, "defg", true},
		{"one write larger than the limit", 4, []string{"a", "0123456789"}, "6789", true},
		{"many small writes", 3, []string{"a", "b", "c", "d", "e"}, "cde", true},
		{"a cut character is dropped", 3, []string{"xxé", "ab"}, "ab", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := newTailBuffer(tc.limit)
			for _, w := range tc.writes {
				b.Write([]byte(w))
			}
			if got := b.String(); got != tc.want || b.Truncated() != tc.trunc {
				t.Errorf("got %q (truncated %v), want %q (%v)", got, b.Truncated(), tc.want, tc.trunc)
			}
		})
	}
}
