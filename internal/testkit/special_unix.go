//go:build unix

package testkit

import (
	"os"
	"syscall"
	"testing"
)

// FIFO creates dir/rel (slash-separated), and its parent directories, as
// a named pipe nobody writes: a file whose plain open waits for ever, for
// the tests of a reader that must not wait. It returns its path.
func FIFO(t testing.TB, dir, rel string) string {
	t.Helper()
	return create(t, dir, rel, func(p string) error { return syscall.Mkfifo(p, 0o644) })
}

// LinkToZero creates dir/rel (slash-separated), and its parent
// directories, as a symbolic link to /dev/zero: a file without an end.
// It returns its path.
func LinkToZero(t testing.TB, dir, rel string) string {
	t.Helper()
	return create(t, dir, rel, func(p string) error { return os.Symlink("/dev/zero", p) })
}
