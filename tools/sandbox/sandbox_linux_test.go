package sandbox

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

// needLandlock skips where the kernel cannot confine at all: the
// environment lacks the feature, nothing in dshd is broken.
func needLandlock(t *testing.T) {
	t.Helper()
	if v, err := landlockABI(); err != nil || v < minFSABI {
		t.Skipf("this kernel has no Landlock ABI >= %d (got %d, %v)", minFSABI, v, err)
	}
}

func TestProbe_ThisKernelHasLandlockABI7(t *testing.T) {
	// The kernels this project targets; a different one is worth knowing
	// about, not a failure.
	v, err := landlockABI()
	t.Logf("Landlock ABI %d (%v)", v, err)
	if err == nil && v < 7 {
		t.Logf("older than the ABI 7 the README's figures were taken on")
	}
}

func TestWorkspaceWrite_WritesLandOnlyInTheWritableRootsAndTheRefusalIsExplained(t *testing.T) {
	needLandlock(t)
	ws, extra, outside := t.TempDir(), t.TempDir(), t.TempDir()
	s := newSandbox(t, Config{WritableRoots: []string{extra}})
	r := sh(t, s, ws, []string{ws}, `
		echo a > in.txt
		echo b > `+extra+`/extra.txt
		echo c > "$TMPDIR/tmp.txt" && cat "$TMPDIR/tmp.txt"
		echo d > `+outside+`/out.txt
		touch ../escape.txt
		exit 0`)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !exists(filepath.Join(ws, "in.txt")) || !exists(filepath.Join(extra, "extra.txt")) {
		t.Fatalf("writes inside the workspace and the writable root failed:\n%s", r.out)
	}
	if exists(filepath.Join(outside, "out.txt")) || exists(filepath.Join(filepath.Dir(ws), "escape.txt")) {
		t.Fatal("a write outside the writable roots landed")
	}
	mustContain(t, "the output", r.out, "c\n", "Permission denied")
	mustContain(t, "the note", r.note, outside+"/out.txt", filepath.Join(filepath.Dir(ws), "escape.txt"), "--sandbox-writable", "sandboxWritableRoots", "workspace-write")
	if exists(r.tmpDir) {
		t.Fatal("the private temp dir outlived the command")
	}
}

func TestWorkspaceWrite_GitCheckoutRemovesAndRenamesInsideTheWorkspace(t *testing.T) {
	needLandlock(t)
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git on this machine")
	}
	ws := t.TempDir()
	s := newSandbox(t, Config{})
	r := sh(t, s, ws, []string{ws}, `set -e
		export HOME="$TMPDIR" GIT_CONFIG_NOSYSTEM=1
		`+git+` init -q -b main .
		`+git+` config user.email t@example.com && `+git+` config user.name t
		mkdir -p dir && echo one > dir/a.txt && echo keep > b.txt
		`+git+` add -A && `+git+` commit -qm one
		`+git+` checkout -qb other
		`+git+` rm -q dir/a.txt && `+git+` mv b.txt c.txt && echo two > d.txt
		`+git+` add -A && `+git+` commit -qm two
		`+git+` checkout -q main
		ls -R`)
	if r.err != nil || r.st.Code != 0 {
		t.Fatalf("git in the sandbox: %v %+v\n%s", r.err, r.st, r.out)
	}
	if !exists(filepath.Join(ws, "dir/a.txt")) || !exists(filepath.Join(ws, "b.txt")) || exists(filepath.Join(ws, "c.txt")) {
		t.Fatalf("checkout did not restore main:\n%s", r.out)
	}
}

func TestReadOnly_NothingButTheTempDirIsWritable(t *testing.T) {
	needLandlock(t)
	ws := t.TempDir()
	s := newSandbox(t, Config{Mode: ReadOnly})
	r := sh(t, s, ws, []string{ws}, `cat /etc/hostname >/dev/null; echo x > "$TMPDIR/t" && echo tmp-ok; echo y > in.txt; exit 0`)
	if r.err != nil {
		t.Fatal(r.err)
	}
	mustContain(t, "the output", r.out, "tmp-ok", "Permission denied")
	if exists(filepath.Join(ws, "in.txt")) {
		t.Fatal("read-only let a write into the workspace")
	}
	mustContain(t, "the note", r.note, "read-only", "--sandbox workspace-write")
}

func TestReadableRoots_ConfineReads(t *testing.T) {
	needLandlock(t)
	ws, secret := t.TempDir(), t.TempDir()
	write(t, filepath.Join(secret, "s.txt"), "secret")
	write(t, filepath.Join(ws, "w.txt"), "mine")
	s := newSandbox(t, Config{ReadableRoots: []string{t.TempDir()}})
	r := sh(t, s, ws, []string{ws}, `cat w.txt; echo; cat `+secret+`/s.txt; exit 0`)
	if r.err != nil {
		t.Fatal(r.err)
	}
	mustContain(t, "the output", r.out, "mine", "Permission denied")
	if strings.Contains(r.out, "secret") && !strings.Contains(r.out, secret) {
		t.Fatalf("a file outside the readable roots was read:\n%s", r.out)
	}
	mustContain(t, "the note", r.note, "--sandbox-readable")
}

func TestOff_ConfinesNothing(t *testing.T) {
	outside := t.TempDir()
	s := newSandbox(t, Config{Mode: Off})
	r := sh(t, s, t.TempDir(), nil, `echo x > `+outside+`/f`)
	if r.err != nil || r.st.Code != 0 || !exists(filepath.Join(outside, "f")) {
		t.Fatalf("off mode: %v %+v %s", r.err, r.st, r.out)
	}
	if r.note != "" {
		t.Fatalf("an unconfined command got a note: %s", r.note)
	}
}

func TestNetworkOff_OnlyTheCommandsOwnLoopbackIsReachable(t *testing.T) {
	needLandlock(t)
	l := testkit.Loopback(t)
	host := l.Addr().String()
	cases := []struct {
		name string
		cfg  Config
		// dshd's server and a server of the command's own
		hostReached, ownReached bool
	}{
		{"network on reaches everything", Config{}, true, true},
		{"network off: a namespace of its own, loopback up", Config{NoNetwork: true}, false, true},
		{"network off without namespaces: Landlock denies TCP", Config{NoNetwork: true, NoNamespaces: true}, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSandbox(t, tc.cfg)
			if !tc.cfg.NoNamespaces && tc.cfg.NoNetwork && !s.supported().namespaces {
				t.Skip("this kernel makes no network namespace for us")
			}
			if why := s.unconfinedReason(); why != "" {
				t.Skip(why)
			}
			r := run(t, s, t.TempDir(), nil, exe(t), "dial", host)
			if got := r.st.Code == 0; got != tc.hostReached {
				t.Errorf("dialling dshd's side: reached=%v, want %v: %s", got, tc.hostReached, r.out)
			}
			if !tc.hostReached {
				mustContain(t, "the note", r.note, "--sandbox-network=true")
			}
			r = run(t, s, t.TempDir(), nil, exe(t), "serve-self")
			if got := r.st.Code == 0; got != tc.ownReached {
				t.Errorf("a server of its own: reached=%v, want %v: %s", got, tc.ownReached, r.out)
			}
			// What a non-root helper needs for loopback is not the command's.
			r = sh(t, s, t.TempDir(), nil, "grep CapAmb /proc/self/status")
			if !strings.Contains(r.out, "0000000000000000") {
				t.Errorf("the command has ambient capabilities: %s", r.out)
			}
		})
	}
}

func TestStatus_ExitCodesSignalsAndProgramsThatDoNotStart(t *testing.T) {
	s := newSandbox(t, Config{Mode: Off})
	if r := sh(t, s, "", nil, "exit 3"); r.err != nil || r.st != (Status{Code: 3}) {
		t.Errorf("exit 3: %+v %v", r.st, r.err)
	}
	if r := sh(t, s, "", nil, "kill -TERM $$"); r.err != nil || r.st.Signal != "SIGTERM" {
		t.Errorf("killed: %+v %v", r.st, r.err)
	}
	r := run(t, s, "", nil, "no-such-program-here")
	var se *StartError
	if !errors.As(r.err, &se) || !strings.Contains(se.Msg, "no-such-program-here") {
		t.Errorf("a missing program: %+v %v", r.st, r.err)
	}
}

func TestFallback_WithoutLandlockCommandsAreRefusedOrRunUnconfined(t *testing.T) {
	saved := landlockABI
	landlockABI = func() (int, error) { return 0, errors.New("ENOSYS") }
	t.Cleanup(func() { landlockABI = saved })
	outside := t.TempDir()

	var logged bytes.Buffer
	refuse := newSandbox(t, Config{Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	if _, err := refuse.Describe([]string{outside}); !errors.Is(err, ErrRefused) {
		t.Fatalf("Describe = %v, want ErrRefused", err)
	}
	r := sh(t, refuse, "", nil, "echo x > "+outside+"/f")
	if !errors.Is(r.err, ErrRefused) || exists(filepath.Join(outside, "f")) {
		t.Fatalf("refuse ran it: %v", r.err)
	}
	mustContain(t, "the refusal", r.err.Error(), "no Landlock", "--sandbox-fallback unconfined")
	sh(t, refuse, "", nil, "true")
	// Said once, loudly, however many commands come.
	if n := strings.Count(logged.String(), "level=ERROR"); n != 1 || !strings.Contains(logged.String(), "refused") {
		t.Fatalf("%d error records:\n%s", n, logged.String())
	}

	run := newSandbox(t, Config{Fallback: Unconfined})
	d, err := run.Describe(nil)
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "the description", d, "unconfined", "no Landlock")
	if r := sh(t, run, "", nil, "echo x > "+outside+"/f"); r.err != nil || !exists(filepath.Join(outside, "f")) {
		t.Fatalf("unconfined did not run it: %v %s", r.err, r.out)
	}
}

func TestDescribe_SaysWhereACommandMayWrite(t *testing.T) {
	needLandlock(t)
	cases := []struct {
		cfg   Config
		wants []string
	}{
		{Config{WritableRoots: []string{"/x"}}, []string{"workspace-write sandbox", "`/ws`", "`/x`", "private temp dir", "toolchain caches", "network allowed"}},
		{Config{Mode: ReadOnly, NoNetwork: true}, []string{"read-only sandbox", "no network"}},
		{Config{Mode: Off}, []string{"no sandbox", "--sandbox off"}},
	}
	for _, tc := range cases {
		d, err := newSandbox(t, tc.cfg).Describe([]string{"/ws"})
		if err != nil {
			t.Fatal(err)
		}
		mustContain(t, "the description", d, tc.wants...)
	}
	var none *Sandbox
	if d, _ := none.Describe(nil); !strings.Contains(d, "unconfined") {
		t.Errorf("a nil sandbox says %q", d)
	}
	// Settings not named are named after the Config's fields.
	unnamed, err := New(&Config{Mode: Off})
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := unnamed.Describe(nil); !strings.Contains(d, "(Mode off)") {
		t.Errorf("a sandbox without the settings' names says %q", d)
	}
}

func TestNew_RejectsBadSettings(t *testing.T) {
	for _, cfg := range []Config{{Mode: "strict"}, {Fallback: "maybe"}, {WritableRoots: []string{"rel"}}, {ReadableRoots: []string{"rel"}}} {
		if _, err := New(&cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
}

func TestDefaultCaches_FollowTheToolchainsVariables(t *testing.T) {
	env := map[string]string{"HOME": "/h", "GOPATH": "/gp1:/gp2", "CARGO_HOME": "/cargo"}
	got := DefaultCaches(func(k string) string { return env[k] })
	for _, want := range []string{"/h/.cache", "/gp1", "/gp2", "/cargo", "/h/.npm", "/h/.rustup", "/h/.gradle", "/h/.m2"} {
		if !strings.Contains(strings.Join(got, " ")+" ", want+" ") {
			t.Errorf("caches %v lack %s", got, want)
		}
	}
	if got[0] != "/h/.cache" {
		t.Errorf("the XDG cache dir comes first (it is created): %v", got)
	}
	_ = os.Getenv
}

func TestExplain_NamesTheRefusedPathsOnlyAsProgramsPrintThem(t *testing.T) {
	needLandlock(t)
	ws := t.TempDir()
	s := newSandbox(t, Config{})
	c := ranTrue(t, s, ws)
	outside := filepath.Dir(ws) // writable by us, not by the sandbox
	cases := []struct {
		name, output string
		want         []string
	}{
		{"sh names itself first", "/bin/sh: 1: cannot create " + outside + "/a: Permission denied\n", []string{outside + "/a"}},
		{"coreutils quote", "touch: cannot touch '" + outside + "/b': Permission denied\n", []string{outside + "/b"}},
		{"Go", "open " + outside + "/c: permission denied\n", []string{outside + "/c"}},
		{"Python", "PermissionError: [Errno 13] Permission denied: '" + outside + "/d'\n", []string{outside + "/d"}},
		{"Node", "Error: EACCES: permission denied, open '" + outside + "/e'\n", []string{outside + "/e"}},
		{"relative to the cwd", "mkdir: cannot create directory '../f': Permission denied\n", []string{outside + "/f"}},
		{"inside the workspace it was not the sandbox", "cp: cannot open '" + ws + "/g': Permission denied\n", nil},
		{"no refusal", "all good\n", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			note := c.Explain(tc.output)
			if len(tc.want) == 0 {
				if note != "" {
					t.Fatalf("a note: %s", note)
				}
				return
			}
			mustContain(t, "the note", note, tc.want...)
			if strings.Contains(note, "/bin/sh") {
				t.Errorf("the program was named as refused: %s", note)
			}
		})
	}
}
