//go:build unix

package search

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

// The open of a walk's file where there is no openat (darwin, the BSDs,
// windows: dir_other.go) is openListed, run here on any unix: a file the
// listing's Lstat saw as regular and that was replaced before the open —
// by a FIFO nobody writes, a link to another file, a link to a device —
// is refused at once and unread; the file itself is read.
func TestOpenListed_AFileReplacedAfterItsLstatIsRefusedWithoutAWait(t *testing.T) {
	for _, tc := range []struct {
		name    string
		replace func(t *testing.T, dir string)
	}{
		{"by a FIFO", func(t *testing.T, dir string) { testkit.FIFO(t, dir, "f.txt") }},
		{"by a link to another file", func(t *testing.T, dir string) { symlink(t, "other.txt", filepath.Join(dir, "f.txt")) }},
		{"by a link to the zero device", func(t *testing.T, dir string) { testkit.LinkToZero(t, dir, "f.txt") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, "f.txt", "the needle\n")
			write(t, dir, "other.txt", "the needle too\n")
			root := openRoot(t, dir)
			fi, err := root.Lstat("f.txt")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(dir, "f.txt")); err != nil {
				t.Fatal(err)
			}
			tc.replace(t, dir)
			testkit.Within(t, "the open of a file replaced "+tc.name, func() {
				if data, err := readAll(openListed(root, "f.txt", fi)); err == nil || data != nil {
					t.Errorf("read %q, %v; want an error and nothing", data, err)
				}
			})
		})
	}
	t.Run("the listed file itself is read", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, "f.txt", "the needle\n")
		root := openRoot(t, dir)
		fi, err := root.Lstat("f.txt")
		if err != nil {
			t.Fatal(err)
		}
		if data, err := readAll(openListed(root, "f.txt", fi)); err != nil || string(data) != "the needle\n" {
			t.Fatalf("read %q, %v", data, err)
		}
	})
	t.Run("an entry listed as no regular file is not opened", func(t *testing.T) {
		dir := t.TempDir()
		testkit.FIFO(t, dir, "fifo")
		root := openRoot(t, dir)
		fi, err := root.Lstat("fifo")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := openListed(root, "fifo", fi); !errors.Is(err, fs.ErrInvalid) {
			t.Fatalf("open of a listed FIFO: %v", err)
		}
	})
}

func openRoot(t *testing.T, dir string) *os.Root {
	t.Helper()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return root
}

func symlink(t *testing.T, target, path string) {
	t.Helper()
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}
