package sandbox

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dshd/dshd/internal/testkit"
	"github.com/dshd/dshd/tools/internal/tooltest"
)

// The test binary plays four parts besides running the tests (the TestMain
// trick): the helper itself (`sandbox POLICY -- ARGV`), a network probe
// (`dial ADDR`, `serve-self`), a parent to kill (`parent`, see
// lifetime_linux_test.go) and a would-be renamer of the machine
// (`sethostname NAME`, see caps_linux_test.go).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "sandbox":
			os.Exit(Main(os.Args[2:]))
		case "dial":
			os.Exit(dial(os.Args[2]))
		case "serve-self":
			os.Exit(serveSelf())
		case "parent":
			os.Exit(parentMain(os.Args[2:]))
		}
		if helper, ok := osHelpers[os.Args[1]]; ok {
			os.Exit(helper(os.Args[2:]))
		}
	}
	// A race-enabled helper otherwise sleeps a second at exit.
	os.Setenv("GORACE", "atexit_sleep_ms=0 "+os.Getenv("GORACE"))
	goleak.VerifyTestMain(m)
}

// osHelpers are the test binary's lives that only some systems have
// (sethostname, on Linux), by their first argument.
var osHelpers = map[string]func(args []string) int{}

// dial connects to addr over TCP and prints the outcome.
func dial(addr string) int {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		fmt.Println("dial:", err)
		return 1
	}
	c.Close()
	fmt.Println("connected")
	return 0
}

// serveSelf listens on loopback and connects to itself: what a test suite
// with a local server does.
func serveSelf() int {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		fmt.Println("listen:", err)
		return 1
	}
	defer l.Close()
	go func() {
		if c, err := l.Accept(); err == nil {
			c.Close()
		}
	}()
	return dial(l.Addr().String())
}

// exe is the test binary, for commands that need a program of ours.
func exe(t testing.TB) string { return testkit.Executable(t) }

// daemonNames are the names the daemon gives the settings
// (cmd/dshd/internal/daemon), so that the tests read the words a user
// reads.
var daemonNames = Settings{
	Mode: "--sandbox", Fallback: "--sandbox-fallback", Network: "--sandbox-network",
	WritableRoots: "--sandbox-writable (sandboxWritableRoots in the config file)",
	ReadableRoots: "--sandbox-readable (sandboxReadableRoots in the config file)",
}

// newSandbox builds a sandbox with test defaults: caches in a temp dir,
// a short grace, the daemon's names of the settings.
func newSandbox(t testing.TB, cfg Config) *Sandbox {
	t.Helper()
	if cfg.Caches == nil {
		cfg.Caches = []string{t.TempDir()}
	}
	if cfg.Settings == (Settings{}) {
		cfg.Settings = daemonNames
	}
	cfg.Grace = 200 * time.Millisecond
	s, err := New(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// result is a finished command.
type result struct {
	st     Status
	err    error
	out    string
	note   string
	tmpDir string
}

// run runs argv in dir under s, with the test's environment.
func run(t testing.TB, s *Sandbox, dir string, roots []string, argv ...string) result {
	t.Helper()
	c, err := s.Command(t.Context(), Spec{Argv: argv, Dir: dir, Env: os.Environ(), Roots: roots})
	if err != nil {
		return result{err: err}
	}
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	if err := c.Start(); err != nil {
		return result{err: err}
	}
	var r result
	r.tmpDir = c.tmp
	tooltest.Within(t, "the command", func() { r.st, r.err = c.Wait() })
	r.out = out.String()
	r.note = c.Explain(r.out)
	return r
}

// sh runs a shell script.
func sh(t testing.TB, s *Sandbox, dir string, roots []string, script string) result {
	t.Helper()
	return run(t, s, dir, roots, "/bin/sh", "-c", script)
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func mustContain(t testing.TB, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s does not say %q:\n%s", what, w, got)
		}
	}
}

func write(t testing.TB, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
