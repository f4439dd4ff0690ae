package smallfile_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/smallfile"
	"github.com/dshd/dshd/internal/testkit"
)

var bound = smallfile.Bound{Max: 16, What: "a test file"}

func TestRead_ARegularFileUpToItsBound(t *testing.T) {
	dir := t.TempDir()
	for _, text := range []string{"", "short\n", strings.Repeat("x", 16)} {
		path := testkit.Write(t, dir, "f", text)
		if data, err := smallfile.Read(path, bound); err != nil || string(data) != text {
			t.Fatalf("Read of %d bytes = %q, %v", len(text), data, err)
		}
	}
}

func TestRead_ALongerFileIsAnErrorNamingTheBoundWithWhatWasRead(t *testing.T) {
	path := testkit.Write(t, t.TempDir(), "f", strings.Repeat("x", 16)+"and more")
	data, err := smallfile.Read(path, bound)
	var tl *smallfile.TooLargeError
	if !errors.As(err, &tl) || tl.Size != 24 || string(data) != strings.Repeat("x", 16)+"a" {
		t.Fatalf("Read = %q, %v", data, err)
	}
	if want := "24 bytes; a test file may have at most 16"; err.Error() != want {
		t.Fatalf("the error says %q, want %q", err, want)
	}
	// A file that grows past the bound after its stat says so, as "more
	// than": its size when read is unknown.
	if got := (&smallfile.TooLargeError{Size: -1, Bound: bound}).Error(); got != "more than 16 bytes; a test file may have at most 16" {
		t.Fatalf("a file grown while read: %q", got)
	}
	// A bound that a setting sets names it, so the reader knows what to
	// raise.
	named := smallfile.Bound{Max: 16, What: "a test file", Setting: "--max-test-file-bytes"}
	if _, err := smallfile.Read(path, named); err == nil || err.Error() != "24 bytes; a test file may have at most 16 (--max-test-file-bytes)" {
		t.Fatalf("the error of a bound a setting sets says %v", err)
	}
}

func TestRead_ADirectoryIsNotRegularAndAMissingFileIsNotExist(t *testing.T) {
	dir := t.TempDir()
	_, err := smallfile.Read(dir, bound)
	var nr *smallfile.NotRegularError
	if !errors.As(err, &nr) || !nr.Mode.IsDir() || err.Error() != "a directory, not a regular file" {
		t.Fatalf("Read of a directory = %v", err)
	}
	if _, err := smallfile.Read(filepath.Join(dir, "gone"), bound); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Read of a missing file = %v", err)
	}
}

// linkedRoot is a root over a tree with sub/in.txt ("inside"), link.txt
// a link to it, and out.txt a link to a secret outside the tree; outside
// is the secret's directory.
func linkedRoot(t *testing.T) (root *os.Root, outside string) {
	t.Helper()
	dir, outside := t.TempDir(), t.TempDir()
	testkit.Write(t, dir, "sub/in.txt", "inside")
	testkit.Write(t, outside, "secret", "SECRET")
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "out.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub/in.txt", filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return root, outside
}

func TestReadIn_StaysInTheRoot(t *testing.T) {
	root, outside := linkedRoot(t)
	if data, err := smallfile.ReadIn(root, "link.txt", bound); err != nil || string(data) != "inside" {
		t.Fatalf("a link inside: %q, %v", data, err)
	}
	for _, name := range []string{"out.txt", "../" + filepath.Base(outside) + "/secret"} {
		if data, err := smallfile.ReadIn(root, name, bound); err == nil || len(data) != 0 {
			t.Fatalf("%s: read %q, %v; want an error and nothing", name, data, err)
		}
	}
}

func TestOpenIn_GivesARegularFileWithItsStatAndStaysInTheRoot(t *testing.T) {
	root, _ := linkedRoot(t)
	f, st, err := smallfile.OpenIn(root, "sub/in.txt")
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil || string(data) != "inside" || st.Size() != 6 || !st.Mode().IsRegular() {
		t.Fatalf("OpenIn read %q, %v with a stat of %d bytes, %v", data, err, st.Size(), st.Mode())
	}
	if f, _, err := smallfile.OpenIn(root, "out.txt"); err == nil || f != nil {
		t.Fatalf("a link out of the root opened: %v", err)
	}
	var nr *smallfile.NotRegularError
	if f, _, err := smallfile.OpenIn(root, "."); !errors.As(err, &nr) || f != nil {
		t.Fatalf("the root's directory opened: %v", err)
	}
}
