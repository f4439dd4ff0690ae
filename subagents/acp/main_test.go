//go:build unix

package acpprovider_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dshd/dshd/internal/testkit"
	st "github.com/dshd/dshd/subagents/subagenttest"
)

// fakeEnv, when set, makes the test binary a fake ACP agent (see
// fakeagent_test.go) instead of running the tests.
const fakeEnv = "ACPPROVIDER_FAKE_AGENT"

// dshdEnv, when set, names a dshd binary to test with instead of building
// one from the module.
const dshdEnv = "ACPPROVIDER_TEST_DSHD"

// dshdBin is the dshd binary built once for the whole package.
var dshdBin string

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeEnv); mode != "" {
		os.Exit(fakeAgentMain(mode))
	}
	dir, err := os.MkdirTemp("", "acpprovider-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	dshdBin = filepath.Join(dir, "dshd")
	if bin := os.Getenv(dshdEnv); bin != "" {
		// A prebuilt dshd, e.g. one with unreleased wiring.
		dshdBin = bin
	} else if err := buildDshd(dshdBin); err != nil {
		fmt.Fprintln(os.Stderr, "building dshd:", err)
		os.RemoveAll(dir)
		os.Exit(2)
	}
	isolateEnv(dir)
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildDshd builds cmd/dshd from the module root into out.
func buildDshd(out string) error {
	// go test puts its own $GOROOT/bin first on PATH.
	goBin, err := exec.LookPath("go")
	if err != nil {
		return err
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	cmd := exec.Command(goBin, "build", "-o", out, "./cmd/dshd")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%v: %s", err, stderr.String())
	}
	return nil
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// watchdog bounds every wait so a deadlock fails with a goroutine dump; it
// is never an assertion about speed.
const watchdog = 20 * time.Second

func recv[T any](t testing.TB, ch <-chan T) T {
	t.Helper()
	return st.Recv(t, ch)
}

// inGroup lists the processes of group pgid that are not zombies.
func inGroup(t testing.TB, pgid int) []testkit.Proc {
	var out []testkit.Proc
	for _, p := range testkit.Processes(t) {
		if p.PGID == pgid && !p.Ended() {
			out = append(out, p)
		}
	}
	return out
}

// checkNoProcesses fails when the test process has any descendant (a
// child left running or a zombie nobody reaped) or when a process of one
// of groups survives.
func checkNoProcesses(t testing.TB, groups ...int) {
	t.Helper()
	if left := testkit.Descendants(t, os.Getpid()); len(left) > 0 {
		t.Errorf("processes left behind: %+v", left)
	}
	for _, g := range groups {
		if left := inGroup(t, g); len(left) > 0 {
			t.Errorf("processes of group %d left behind: %+v", g, left)
		}
	}
}

// testdata returns the absolute path of a testdata file.
func testdata(t testing.TB, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}
