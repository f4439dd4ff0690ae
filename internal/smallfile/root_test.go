package smallfile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/dshd/dshd/internal/smallfile"
)

// openRoot is the workspace of linkedRoot as a [smallfile.Root], with its
// directory and the secret's directory outside it.
func openRoot(t *testing.T) (r *smallfile.Root, dir, outside string) {
	t.Helper()
	root, outside := linkedRoot(t)
	dir = root.Name()
	if err := os.Symlink(outside, filepath.Join(dir, "outdir")); err != nil {
		t.Fatal(err)
	}
	r, err := smallfile.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, dir, outside
}

// readDir lists the names in the directory at path through r.
func readDir(r *smallfile.Root, path string) ([]string, error) {
	d, err := r.OpenDir(path)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Names()
}

// isOutside fails t unless err is an *OutsideError of the workspace dir,
// saying so.
func isOutside(t *testing.T, what string, err error, dir string) {
	t.Helper()
	var oe *smallfile.OutsideError
	if !errors.As(err, &oe) || oe.Root != dir || err.Error() != "leads outside the workspace "+dir {
		t.Fatalf("%s: %v; want it to lead outside the workspace %s", what, err, dir)
	}
}

// A path below the workspace is read, listed and stat'ed through it: a
// link that stays inside is followed, and a path or a link that leads
// out is an OutsideError, with nothing of the file outside read.
// TestRoot_ALinkOutIsAnOutsideError also stands for the text of the os
// package's error, which tells a link out from other failures.
func TestRoot_ALinkOutIsAnOutsideError(t *testing.T) {
	r, dir, outside := openRoot(t)
	if data, err := r.Read(filepath.Join(dir, "link.txt"), bound); err != nil || string(data) != "inside" {
		t.Fatalf("a link inside: %q, %v", data, err)
	}
	if info, err := r.Stat(filepath.Join(dir, "link.txt")); err != nil || info.Size() != 6 || !info.Mode().IsRegular() {
		t.Fatalf("the stat of a link inside: %v, %v", info, err)
	}
	for _, path := range []string{
		filepath.Join(dir, "out.txt"),
		filepath.Join(dir, "outdir", "secret"),
		filepath.Join(outside, "secret"),
		dir + "/../" + filepath.Base(outside) + "/secret",
	} {
		data, err := r.Read(path, bound)
		isOutside(t, "a read of "+path, err, dir)
		if data != nil {
			t.Fatalf("%s: read %q", path, data)
		}
		_, err = r.Stat(path)
		isOutside(t, "a stat of "+path, err, dir)
	}
	_, err := readDir(r, filepath.Join(dir, "outdir"))
	isOutside(t, "the listing of a link to a directory outside", err, dir)
	_, err = smallfile.ReadBelow(dir, filepath.Join(dir, "out.txt"), bound)
	isOutside(t, "ReadBelow the workspace", err, dir)
	// The user's own file is read wherever its link leads.
	if data, err := smallfile.ReadBelow("", filepath.Join(dir, "out.txt"), bound); err != nil || string(data) != "SECRET" {
		t.Fatalf("ReadBelow no workspace: %q, %v", data, err)
	}
}

// The other failures are the os package's, naming the path as given, and
// Read's own: a file too large, or not regular.
func TestRoot_OtherFailuresNameThePath(t *testing.T) {
	r, dir, _ := openRoot(t)
	gone := filepath.Join(dir, "gone.md")
	for what, err := range map[string]error{
		"a read":    func() error { _, err := r.Read(gone, bound); return err }(),
		"a stat":    func() error { _, err := r.Stat(gone); return err }(),
		"a listing": func() error { _, err := readDir(r, gone); return err }(),
	} {
		var pe *fs.PathError
		if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || pe.Path != gone {
			t.Fatalf("%s of a missing file: %v", what, err)
		}
	}
	var nr *smallfile.NotRegularError
	if _, err := r.Read(filepath.Join(dir, "sub"), bound); !errors.As(err, &nr) || err.Error() != "a directory, not a regular file" {
		t.Fatalf("a read of a directory: %v", err)
	}
	if _, err := readDir(r, filepath.Join(dir, "link.txt")); err == nil || err.Error() != "open "+filepath.Join(dir, "link.txt")+": not a directory" {
		t.Fatalf("the listing of a file: %v", err)
	}
}

func TestRoot_ADirsNamesAreSorted(t *testing.T) {
	r, dir, _ := openRoot(t)
	names, err := readDir(r, dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := filepath.Join(names...); got != filepath.Join("link.txt", "out.txt", "outdir", "sub") {
		t.Fatalf("listed %v", names)
	}
}

// An absolute link is followed when it names a place inside the
// workspace, as written or through the links of the workspace's own path,
// as read_file follows one; one that names a place outside, or a chain
// of links that never ends, is still outside.
func TestRoot_AnAbsoluteLinkInsideIsFollowed(t *testing.T) {
	r, dir, outside := openRoot(t)
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{
		"abs.txt": filepath.Join(dir, "sub", "in.txt"), "absdir": filepath.Join(real, "sub"),
		"absout.txt": filepath.Join(outside, "secret"), "loop1": filepath.Join(dir, "loop2"), "loop2": filepath.Join(dir, "loop1"),
	} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, path := range []string{filepath.Join(dir, "abs.txt"), filepath.Join(dir, "absdir", "in.txt")} {
		if data, err := r.Read(path, bound); err != nil || string(data) != "inside" {
			t.Fatalf("%s: %q, %v", path, data, err)
		}
		if info, err := r.Stat(path); err != nil || info.Size() != 6 {
			t.Fatalf("the stat of %s: %v", path, err)
		}
	}
	if entries, err := readDir(r, filepath.Join(dir, "absdir")); err != nil || len(entries) != 1 || entries[0] != "in.txt" {
		t.Fatalf("the listing of an absolute link to a directory inside: %v, %v", entries, err)
	}
	for _, name := range []string{"absout.txt", "loop1"} {
		_, err := r.Read(filepath.Join(dir, name), bound)
		isOutside(t, name, err, dir)
	}
}

// An entry of a directory opened through the workspace is stat'ed through
// that directory, and through the workspace when its link leads out of
// the directory: one that stays inside the workspace is followed, one
// that leads out of it is an OutsideError.
func TestRoot_ADirsEntriesAreStatedWithinTheWorkspace(t *testing.T) {
	r, dir, _ := openRoot(t)
	sub := filepath.Join(dir, "sub")
	for name, target := range map[string]string{"up.md": "../link.txt", "abs.md": filepath.Join(dir, "sub", "in.txt"), "out.md": "../out.txt", "here.md": "in.txt"} {
		if err := os.Symlink(target, filepath.Join(sub, name)); err != nil {
			t.Fatal(err)
		}
	}
	d, err := r.OpenDir(sub)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, name := range []string{"in.txt", "here.md", "up.md", "abs.md"} {
		if info, err := d.Stat(name); err != nil || info.Size() != 6 || !info.Mode().IsRegular() {
			t.Fatalf("the stat of %s: %v, %v", name, info, err)
		}
	}
	_, err = d.Stat("out.md")
	isOutside(t, "the stat of a link out through a directory", err, dir)
	var pe *fs.PathError
	if _, err := d.Stat("gone.md"); !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || pe.Path != filepath.Join(sub, "gone.md") {
		t.Fatalf("the stat of a missing entry: %v", err)
	}
}
