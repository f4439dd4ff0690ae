package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestAccessStaysInsideTheRootWhateverThePath hands the workspace's
// methods paths that were never resolved, as a symlink swapped in after
// Resolve would make them: every access through a link that leaves the
// root fails.
func TestAccessStaysInsideTheRootWhateverThePath(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	write(t, outside, "secret.txt", "SECRET")
	write(t, dir, "in/file.txt", "inside")
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("in", filepath.Join(dir, "alias")); err != nil {
		t.Fatal(err)
	}
	ws := mustNew(t, dir)
	l := NewLocalFS(ws)
	escaping := filepath.Join(dir, "out", "secret.txt")
	if f, err := ws.Open(escaping); err == nil {
		f.Close()
		t.Error("Open followed a link out of the root")
	}
	if _, err := ws.Stat(escaping); err == nil {
		t.Error("Stat followed a link out of the root")
	}
	if d, err := ws.OpenDir(filepath.Join(dir, "out")); err == nil {
		d.Close()
		t.Error("OpenDir followed a link out of the root")
	}
	if got, err := l.ReadTextFile(t.Context(), escaping, 0, 0); err == nil {
		t.Errorf("ReadTextFile read %q outside the root", got)
	}
	if err := l.WriteTextFile(t.Context(), filepath.Join(dir, "out", "new.txt"), "x"); err == nil {
		t.Error("WriteTextFile wrote through a link out of the root")
	}
	if _, err := os.Stat(filepath.Join(outside, "new.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a file landed outside: %v", err)
	}
	if _, err := ws.Open(filepath.Join(t.TempDir(), "x")); !errors.Is(err, ErrOutside) {
		t.Errorf("a path under no root: %v, want ErrOutside", err)
	}
	// A link that stays inside the root still works.
	if got, err := l.ReadTextFile(t.Context(), filepath.Join(dir, "alias", "file.txt"), 0, 0); err != nil || got != "inside" {
		t.Errorf("through an inside link: %q, %v", got, err)
	}
}

func TestPendingWriteLandsWhereItWasPreparedOrNowhere(t *testing.T) {
	t.Run("a directory swapped after the preparation fails the commit", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, "d/f.txt", "old")
		write(t, dir, "e/f.txt", "other")
		w, err := NewLocalFS(mustNew(t, dir)).PrepareWrite(filepath.Join(dir, "d", "f.txt"))
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if got, err := w.ReadTextFile(t.Context()); err != nil || got != "old" {
			t.Fatalf("ReadTextFile = %q, %v", got, err)
		}
		if err := os.Rename(filepath.Join(dir, "d"), filepath.Join(dir, "d.away")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("e", filepath.Join(dir, "d")); err != nil {
			t.Fatal(err)
		}
		if err := w.Commit(t.Context(), "new"); !errors.Is(err, ErrChanged) {
			t.Fatalf("Commit = %v, want ErrChanged", err)
		}
		if read(t, dir, "e/f.txt") != "other" || read(t, dir, "d.away/f.txt") != "old" {
			t.Fatal("a refused commit wrote")
		}
	})
	t.Run("missing directories are created at commit, not before", func(t *testing.T) {
		dir := t.TempDir()
		w, err := NewLocalFS(mustNew(t, dir)).PrepareWrite(filepath.Join(dir, "a", "b", "new.txt"))
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if _, err := w.ReadTextFile(t.Context()); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("ReadTextFile of a file to create: %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, "a")); !errors.Is(err, fs.ErrNotExist) {
			t.Fatal("preparing created a directory")
		}
		if err := w.Commit(t.Context(), "hi"); err != nil {
			t.Fatal(err)
		}
		if read(t, dir, "a/b/new.txt") != "hi" {
			t.Fatal("not written")
		}
	})
}
