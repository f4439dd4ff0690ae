package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWorkspaceResolve(t *testing.T) {
	base := t.TempDir()
	cwd := filepath.Join(base, "proj")
	extra := filepath.Join(base, "extra")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{cwd, extra, outside, filepath.Join(cwd, "sub", "deep")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, outside, "secret.txt", "secret")
	write(t, cwd, "sub/file.txt", "x")
	link := func(target, name string) {
		if err := os.Symlink(target, filepath.Join(cwd, name)); err != nil {
			t.Fatal(err)
		}
	}
	link(outside, "out")                                    // a directory link pointing outside
	link(filepath.Join(outside, "secret.txt"), "leak.txt")  // a file link pointing outside
	link(filepath.Join(outside, "nothing.txt"), "dangling") // a dangling link pointing outside
	link("sub", "in")                                       // a relative link staying inside
	link(filepath.Join(cwd, "sub", "new.txt"), "future")    // a dangling link staying inside
	link("../outside", "up")                                // relative, escaping
	link("loop", "loop")                                    // a link to itself
	if err := os.Symlink(filepath.Join(cwd, "out"), filepath.Join(cwd, "sub", "indirect")); err != nil {
		t.Fatal(err) // a link to a link that escapes
	}

	ws, err := New(cwd, []string{extra})
	if err != nil {
		t.Fatal(err)
	}
	inside := []struct {
		name, path, want string
	}{
		{"a relative path", "sub/file.txt", filepath.Join(cwd, "sub/file.txt")},
		{"the cwd itself", ".", cwd},
		{"an absolute path inside", filepath.Join(cwd, "sub"), filepath.Join(cwd, "sub")},
		{"a path that does not exist yet", "sub/deep/new/file.go", filepath.Join(cwd, "sub/deep/new/file.go")},
		{"dot-dot that stays inside", "sub/deep/../file.txt", filepath.Join(cwd, "sub/file.txt")},
		{"a symlink that stays inside", "in/file.txt", filepath.Join(cwd, "sub/file.txt")},
		{"a dangling symlink that stays inside", "future", filepath.Join(cwd, "sub/new.txt")},
		{"an additional directory", filepath.Join(extra, "x.txt"), filepath.Join(extra, "x.txt")},
	}
	for _, tc := range inside {
		t.Run(tc.name+" resolves inside", func(t *testing.T) {
			got, err := ws.Resolve(tc.path)
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tc.path, err)
			}
			if got != tc.want {
				t.Errorf("Resolve(%q) = %q, want %q", tc.path, got, tc.want)
			}
		})
	}
	outsideCases := []struct{ name, path string }{
		{"dot-dot escaping the cwd", "../outside/secret.txt"},
		{"deep dot-dot escaping the cwd", "sub/deep/../../../outside"},
		{"an absolute path elsewhere", "/etc/passwd"},
		{"the root", "/"},
		{"a symlinked directory pointing outside", "out/secret.txt"},
		{"a new file under a symlink pointing outside", "out/new/file.txt"},
		{"a file symlink pointing outside", "leak.txt"},
		{"a dangling symlink pointing outside", "dangling"},
		{"a relative symlink escaping", "up/secret.txt"},
		{"a symlink in an intermediate directory", "sub/indirect/secret.txt"},
		{"a sibling directory sharing the prefix", cwd + "-other/x"},
	}
	for _, tc := range outsideCases {
		t.Run(tc.name+" is refused", func(t *testing.T) {
			got, err := ws.Resolve(tc.path)
			if !errors.Is(err, ErrOutside) {
				t.Fatalf("Resolve(%q) = %q, %v; want ErrOutside", tc.path, got, err)
			}
			if want := tc.path; !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not name the path %q", err, want)
			}
		})
	}
	t.Run("a symlink loop is an error", func(t *testing.T) {
		if _, err := ws.Resolve("loop/x"); err == nil {
			t.Fatal("Resolve of a symlink loop succeeded")
		}
	})
	t.Run("an empty path is an error", func(t *testing.T) {
		if _, err := ws.Resolve(""); err == nil {
			t.Fatal("Resolve(\"\") succeeded")
		}
	})
}

func TestWorkspaceRootThroughSymlink(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	if err := os.MkdirAll(filepath.Join(real, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	alias := filepath.Join(base, "alias")
	if err := os.Symlink(real, alias); err != nil {
		t.Fatal(err)
	}
	ws, err := New(alias, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("paths come back under the root as named", func(t *testing.T) {
		got, err := ws.Resolve("sub/a.txt")
		if err != nil || got != filepath.Join(alias, "sub/a.txt") {
			t.Fatalf("Resolve = %q, %v", got, err)
		}
	})
	t.Run("the root's real path is inside too", func(t *testing.T) {
		got, err := ws.Resolve(filepath.Join(real, "sub"))
		if err != nil || got != filepath.Join(alias, "sub") {
			t.Fatalf("Resolve = %q, %v", got, err)
		}
	})
	t.Run("display is relative to the cwd", func(t *testing.T) {
		if got := ws.Display(filepath.Join(alias, "sub/a.txt")); got != "sub/a.txt" {
			t.Errorf("Display = %q", got)
		}
		if got := ws.Display("/etc/x"); got != "/etc/x" {
			t.Errorf("Display = %q", got)
		}
	})
}

func TestNewWorkspaceRefusesRelativeRoots(t *testing.T) {
	if _, err := New("rel", nil); err == nil {
		t.Error("relative cwd accepted")
	}
	if _, err := New(t.TempDir(), []string{"rel"}); err == nil {
		t.Error("relative additional directory accepted")
	}
	ws, err := New(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ws.Roots()) != 1 || ws.Roots()[0] != ws.Cwd() {
		t.Errorf("Roots = %v", ws.Roots())
	}
}
