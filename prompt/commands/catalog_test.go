package commands

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/dshd/dshd/internal/testkit"
)

// agedCatalog ages ws's times and returns the catalog of its sources, which
// must see no change at its next look.
func agedCatalog(t *testing.T, ws string) *Catalog {
	t.Helper()
	age(t, ws)
	c := NewCatalog(WorkspaceSources(ws), Limits{})
	if c.Refresh() {
		t.Fatal("an unchanged catalog says it changed")
	}
	return c
}

// ageAndLook ages root's times and lets c take the look that trusts
// them, so that the next change is seen through the cheap path.
func ageAndLook(t *testing.T, c *Catalog, root string) {
	t.Helper()
	age(t, root)
	c.Refresh()
}

// age sets the times of root and everything under it an hour back, so a
// catalog built next trusts them: the look it keeps is the cheap one.
func age(t *testing.T, root string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink != 0 {
			return err // Chtimes would follow a link
		}
		return os.Chtimes(p, old, old)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// wantCommand fails unless c, refreshed, says it changed and has (or,
// with body "", has not) the command name expanding to body.
func wantCommand(t *testing.T, c *Catalog, step, name, body string) {
	t.Helper()
	if !c.Refresh() {
		t.Fatalf("%s: Refresh saw no change", step)
	}
	cmd, ok := c.Lookup(name)
	switch {
	case body == "" && ok:
		t.Fatalf("%s: /%s is still there", step, name)
	case body != "" && (!ok || cmd.Expand("") != body):
		t.Fatalf("%s: /%s = %+v, %v; want body %q", step, name, cmd, ok, body)
	}
	if c.Refresh() {
		t.Fatalf("%s: a second Refresh saw a change again", step)
	}
}

// change is one step of a catalog test: do changes the files, and the
// catalog's next look must then find /name with body ("" for none).
type change struct {
	what, name, body string
	do               func() error
}

// followChanges makes each change in turn, with ws's times aged and
// looked at before each but the first, so that every change is seen
// through the cheap path.
func followChanges(t *testing.T, ws string, changes []change) {
	t.Helper()
	c := agedCatalog(t, ws)
	for i, ch := range changes {
		if i > 0 {
			ageAndLook(t, c, ws)
		}
		if err := ch.do(); err != nil {
			t.Fatalf("%s: %v", ch.what, err)
		}
		wantCommand(t, c, ch.what, ch.name, ch.body)
	}
}

// write is a change that writes body to dir/name.
func write(t *testing.T, dir, name, body string) func() error {
	return func() error { testkit.Write(t, dir, name, body); return nil }
}

func TestCatalog_SeesEveryChangeToFilesWhoseTimesAreOld(t *testing.T) {
	ws := t.TempDir()
	dir := filepath.Join(ws, ".dshd", "commands")
	testkit.Write(t, dir, "a.md", "A1\n")
	followChanges(t, ws, []change{
		{"a new file", "b", "B", write(t, dir, "b.md", "B\n")},
		{"a file rewritten in place", "a", "A2 longer", write(t, dir, "a.md", "A2 longer\n")},
		{"a file removed", "b", "", func() error { return os.Remove(filepath.Join(dir, "b.md")) }},
	})
}

func TestCatalog_SeesACommandDirectoryCreatedLater(t *testing.T) {
	ws := t.TempDir()
	followChanges(t, ws, []change{
		// Neither .dshd nor .dshd/commands existed; .claude is made with
		// it, so that at the next step .claude exists (aged) and
		// .claude/commands does not.
		{"a new .dshd/commands", "x", "X", func() error {
			testkit.Write(t, filepath.Join(ws, ".dshd", "commands"), "x.md", "X\n")
			return os.Mkdir(filepath.Join(ws, ".claude"), 0o755)
		}},
		{"a new .claude/commands", "y", "Y", write(t, filepath.Join(ws, ".claude", "commands"), "y.md", "Y\n")},
		{"the directory removed", "x", "", func() error { return os.RemoveAll(filepath.Join(ws, ".dshd")) }},
	})
}

func TestCatalog_SeesAChangeThatKeptTheSizeAndTheModTime(t *testing.T) {
	// A second write within the file system's clock tick leaves the
	// modification time as it was; Chtimes makes that happen for sure.
	ws := t.TempDir()
	dir := filepath.Join(ws, ".dshd", "commands")
	p := testkit.Write(t, dir, "a.md", "A1\n")
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	c := NewCatalog(WorkspaceSources(ws), Limits{})
	testkit.Write(t, dir, "a.md", "A2\n")
	if err := os.Chtimes(p, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
	if !c.Refresh() {
		t.Fatal("a change within one mtime tick was not seen")
	}
	if cmd, _ := c.Lookup("a"); cmd.Expand("") != "A2" {
		t.Fatalf("a = %+v", cmd)
	}
}

func TestCatalog_SeesALinkedFileAppear(t *testing.T) {
	ws := t.TempDir()
	dir := filepath.Join(ws, ".dshd", "commands")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(ws, "shared", "l.md")
	if err := os.Symlink(target, filepath.Join(dir, "l.md")); err != nil {
		t.Fatal(err)
	}
	age(t, ws)
	c := NewCatalog(WorkspaceSources(ws), Limits{})
	if len(c.Errors()) != 1 {
		t.Fatalf("a dangling link: errors %v", c.Errors())
	}
	testkit.Write(t, filepath.Dir(target), "l.md", "L\n")
	wantCommand(t, c, "the link's target created", "l", "L")
	if len(c.Errors()) != 0 {
		t.Fatalf("errors %v", c.Errors())
	}
}

// BenchmarkCatalogRefresh is the look a session takes at its commands
// before each turn, when nothing changed: with no command directory, a
// few files, and a repository's 3000, of which the default count reads
// 512.
func BenchmarkCatalogRefresh(b *testing.B) {
	old := time.Now().Add(-time.Hour)
	for _, bc := range []struct {
		name  string
		files int
	}{{"no command dirs", 0}, {"three files", 3}, {"3000 files", 3000}} {
		b.Run(bc.name, func(b *testing.B) {
			ws := b.TempDir()
			for i := range bc.files {
				p := testkit.Write(b, filepath.Join(ws, ".dshd", "commands"), fmt.Sprintf("c%04d.md", i), "body\n")
				os.Chtimes(p, old, old)
				os.Chtimes(filepath.Dir(p), old, old)
			}
			os.Chtimes(ws, old, old)
			c := NewCatalog(WorkspaceSources(ws), Limits{})
			b.ReportAllocs()
			for b.Loop() {
				if c.Refresh() {
					b.Fatal("changed")
				}
			}
		})
	}
}

// Past the count, a file added or removed changes no stamp of the files
// read; the catalog still sees it, since the mistake that counts the
// directory's files changes, and says so once.
func TestCatalog_AFileAddedPastTheCountChangesTheMistake(t *testing.T) {
	ws := t.TempDir()
	dir := filepath.Join(ws, ".dshd", "commands")
	testkit.Write(t, dir, "a.md", "A\n")
	testkit.Write(t, dir, "b.md", "B\n")
	age(t, ws)
	limits := Limits{MaxFiles: 1, Settings: Settings{MaxFiles: "--max-command-files"}}
	c := NewCatalog(WorkspaceSources(ws), limits)
	says := func(n, over int) string {
		return fmt.Sprintf("%s: %d command files, the last %d by name not read: at most 1 are read from a workspace's .dshd/commands and .claude/commands together (--max-command-files)", dir, n, over)
	}
	mistakes := func() []string {
		var out []string
		for _, e := range c.Errors() {
			out = append(out, e.Error())
		}
		return out
	}
	if got := mistakes(); !slices.Equal(got, []string{says(2, 1)}) {
		t.Fatalf("mistakes %q", got)
	}
	testkit.Write(t, dir, "c.md", "C\n")
	if c.Refresh() {
		t.Fatal("the commands changed: c.md, past the count, was read")
	}
	if got := mistakes(); !slices.Equal(got, []string{says(3, 2)}) {
		t.Fatalf("after c.md was added past the count, mistakes %q", got)
	}
	if _, ok := c.Lookup("c"); ok {
		t.Fatal("c.md, past the count, is a command")
	}
}
