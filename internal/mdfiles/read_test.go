package mdfiles_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/dshd/dshd/internal/mdfiles"
	"github.com/dshd/dshd/internal/testkit"
)

func stampOf(t *testing.T, dir, name string) mdfiles.Stamp {
	t.Helper()
	files, err := mdfiles.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if filepath.Base(f.Path) == name {
			return f.Stamp()
		}
	}
	t.Fatalf("%s is not listed", name)
	return mdfiles.Stamp{}
}

func TestRead_TheFileAsItIsNowAlsoWhenItChangedSinceItsStamp(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, before, after string }{
		{"the same", "text\n", "text\n"},
		{"grown", "short\n", "much longer than the stamp says\n"},
		{"shrunk", "a long first version\n", "short\n"},
		{"emptied", "text\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testkit.Write(t, dir, "a.md", tc.before)
			st := stampOf(t, dir, "a.md")
			testkit.Write(t, dir, "a.md", tc.after)
			data, err := mdfiles.Read(st)
			if err != nil || string(data) != tc.after {
				t.Fatalf("Read = %q, %v; want %q", data, err, tc.after)
			}
		})
	}
	big := make([]byte, 300<<10) // several reads, growing the buffer
	for i := range big {
		big[i] = byte('a' + i%26)
	}
	testkit.Write(t, dir, "big.md", "x")
	st := stampOf(t, dir, "big.md")
	testkit.Write(t, dir, "big.md", string(big))
	if data, err := mdfiles.Read(st); err != nil || string(data) != string(big) {
		t.Fatalf("a file grown to %d bytes: read %d, %v", len(big), len(data), err)
	}
}

// goneStamp is the stamp of a file removed since.
func goneStamp(t *testing.T) mdfiles.Stamp {
	t.Helper()
	dir := t.TempDir()
	testkit.Write(t, dir, "a.md", "text\n")
	st := stampOf(t, dir, "a.md")
	if err := os.Remove(st.Path); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestRead_AFileGoneIsNotExist(t *testing.T) {
	if _, err := mdfiles.Read(goneStamp(t)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Read = %v, want not exist", err)
	}
}
