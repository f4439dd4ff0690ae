//go:build unix

package search

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

// A repository's .gitignore or .git/info/exclude that is a FIFO, a link
// in the tree or a device is not waited for nor read: the walk goes on
// without its rules and says which it could not use.
func TestWalk_AnIgnoreFileThatIsNoRegularFileIsNoWaitAndIsSaid(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "sub/deeper/a.txt", "a")
	write(t, dir, "sub/b.log", "b")
	write(t, dir, "rules", "*.log\n")
	for _, fifo := range []string{".gitignore", ".git/info/exclude", "sub/deeper/.gitignore"} {
		testkit.FIFO(t, dir, fifo)
	}
	if err := os.Symlink("../rules", filepath.Join(dir, "sub", ".gitignore")); err != nil {
		t.Fatal(err)
	}
	const fifo = "a named pipe (FIFO), not a regular file"
	for _, tc := range []struct {
		start  string
		unused []string
	}{
		// From the root, its own .gitignore is listed; from sub, it is
		// one of the files above.
		{"", []string{".git/info/exclude: " + fifo, ".gitignore: " + fifo, "sub/.gitignore: a symbolic link, not a regular file", "sub/deeper/.gitignore: " + fifo}},
		{"sub", []string{".git/info/exclude: " + fifo, ".gitignore: " + fifo, "sub/.gitignore: a symbolic link, not a regular file", "sub/deeper/.gitignore: " + fifo}},
	} {
		files, unused := walkFiles(t, dir, tc.start, Limits{})
		if !slices.Contains(files, "sub/deeper/a.txt") || !slices.Contains(files, "sub/b.log") {
			t.Errorf("from %q the walk visited %v", tc.start, files)
		}
		if !slices.Equal(unused, tc.unused) {
			t.Errorf("from %q the unused ignore files are:\n%s\nwant:\n%s", tc.start, strings.Join(unused, "\n"), strings.Join(tc.unused, "\n"))
		}
	}
}
