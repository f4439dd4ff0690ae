package sandbox

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// nobody is the uid and gid the non-root run uses.
const nobody = 65534

// TestAsNonRoot_TheSandboxWorksThroughAUserNamespace re-runs this package's
// confinement, network and lifetime tests as an unprivileged user, where
// the helper's namespaces take a user namespace (and loopback an ambient
// capability the command must not keep). It needs root to switch users.
func TestAsNonRoot_TheSandboxWorksThroughAUserNamespace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("switching to an unprivileged user needs root (these tests already run unprivileged)")
	}
	needLandlock(t)
	if os.Getenv("SANDBOX_TEST_NONROOT") != "" {
		t.Skip("already the non-root run")
	}
	dir := t.TempDir()
	// The user must reach the copy of the test binary: the test's temp
	// dirs are private to root.
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "sandbox.test")
	copyFile(t, exe(t), bin)
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(home, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.count=1", "-test.run", "^(TestWorkspaceWrite|TestReadOnly|TestNetworkOff|TestLifetime|TestStatus|TestHidden)")
	cmd.Dir = home
	cmd.Env = append(os.Environ(), "HOME="+home, "TMPDIR="+home, "SANDBOX_TEST_NONROOT=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody, NoSetGroups: true}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the tests as uid %d: %v\n%s", nobody, err, out)
	}
	t.Logf("as uid %d:\n%s", nobody, out)
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}
