package testkit

import (
	"os"
	"path/filepath"
	"testing"
)

// Write creates dir/rel (slash-separated) with content, and its parent
// directories, and returns its path.
func Write(t testing.TB, dir, rel, content string) string {
	t.Helper()
	return create(t, dir, rel, func(p string) error { return os.WriteFile(p, []byte(content), 0o644) })
}

// Symlink creates dir/rel (slash-separated), and its parent directories,
// as a symbolic link to target, and returns its path.
func Symlink(t testing.TB, dir, rel, target string) string {
	t.Helper()
	return create(t, dir, rel, func(p string) error { return os.Symlink(target, p) })
}

// create makes dir/rel (slash-separated) with mk, after its parent
// directories, and returns its path.
func create(t testing.TB, dir, rel string, mk func(path string) error) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := mk(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// Read returns the content of dir/rel (slash-separated).
func Read(t testing.TB, dir, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ShortDir returns a new directory named prefix and a few digits right
// under the system's temp dir, removed when the test ends: for paths that
// must stay short, which t.TempDir's need not be (a unix socket's path has
// 108 bytes; a diagnostic hides a long name as if it were a credential).
func ShortDir(t testing.TB, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
