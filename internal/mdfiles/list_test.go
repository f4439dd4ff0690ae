package mdfiles_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dshd/dshd/internal/mdfiles"
	"github.com/dshd/dshd/internal/smallfile"
)

func TestList_TheMarkdownFilesByNameWithTheirStatsAndStamps(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{"b.md": "bee", "a.md": "a", "notes.txt": "not markdown"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "folder.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("b.md", filepath.Join(dir, "c.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("gone", filepath.Join(dir, "d.md")); err != nil {
		t.Fatal(err)
	}
	files, more, err := mdfiles.List("", dir, 10)
	if err != nil || more != 0 {
		t.Fatal(more, err)
	}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f.Path))
	}
	if len(files) != 4 || names[0] != "a.md" || names[1] != "b.md" || names[2] != "c.md" || names[3] != "d.md" {
		t.Fatalf("files %v", names)
	}
	// The symlink's stat is its target's: c.md stamps like b.md's 3 bytes.
	if st := files[2].Stamp(); files[2].Err != nil || st.Size != 3 || st.Path != filepath.Join(dir, "c.md") || st.ModTime != files[1].Stamp().ModTime {
		t.Fatalf("c.md: %+v, %v", st, files[2].Err)
	}
	if files[3].Err == nil || files[3].Info != nil {
		t.Fatalf("a dangling link: %+v", files[3])
	}
}

func TestList_AMissingDirectoryHasNoneAndAFileIsNoDirectory(t *testing.T) {
	dir := t.TempDir()
	if files, more, err := mdfiles.List("", filepath.Join(dir, "none"), 10); files != nil || more != 0 || err != nil {
		t.Fatalf("a missing dir: %v, %d, %v", files, more, err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := mdfiles.List("", file, 10); err == nil {
		t.Fatal("listing a file: no error")
	}
}

func TestStampOf_AFileAsListedAndNoFileAsSizeMinusOne(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte("text"), 0o644); err != nil {
		t.Fatal(err)
	}
	files, _, err := mdfiles.List("", dir, 10)
	if err != nil || len(files) != 1 {
		t.Fatal(files, err)
	}
	if got := mdfiles.StampOf("", files[0].Path); got != files[0].Stamp() || got.Type != 0 {
		t.Fatalf("StampOf = %+v, listed %+v", got, files[0].Stamp())
	}
	gone := mdfiles.StampOf("", filepath.Join(dir, "gone.json"))
	if gone.Size != -1 || gone.Path != filepath.Join(dir, "gone.json") {
		t.Fatalf("the stamp of no file: %+v", gone)
	}
	if got := mdfiles.StampOf("", dir); !got.Type.IsDir() {
		t.Fatalf("a directory's stamp has the type %v", got.Type)
	}
}

// writeNames creates an empty file in dir for each of names.
func writeNames(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func baseNames(files []mdfiles.File) []string {
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f.Path))
	}
	return names
}

// A directory of many more files than the bound, created in no order:
// the first by name are listed, the others only counted (a dangling link
// among them has no stat to fail), and so are directories and other
// names left out as before.
func TestList_TheFirstMaxByNameAndHowManyMore(t *testing.T) {
	dir := t.TempDir()
	var names []string
	for i := range 1500 {
		names = append(names, fmt.Sprintf("f%04d.md", i))
	}
	rand.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	writeNames(t, dir, names...)
	writeNames(t, dir, "a.txt", "b.md.bak")
	if err := os.Mkdir(filepath.Join(dir, "a.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("gone", filepath.Join(dir, "zz.md")); err != nil {
		t.Fatal(err)
	}
	for _, max := range []int{0, 1, 3, 600, 1501, 2000} {
		files, more, err := mdfiles.List("", dir, max)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for i := range min(max, 1500) {
			want = append(want, fmt.Sprintf("f%04d.md", i))
		}
		if max > 1500 {
			want = append(want, "zz.md")
		}
		if got := baseNames(files); !slices.Equal(got, want) || more != 1501-len(want) {
			t.Fatalf("List(dir, %d) = %d files (%v…), %d more; want %d files, %d more", max, len(got), got[:min(3, len(got))], more, len(want), 1501-len(want))
		}
		for _, f := range files {
			if (f.Err != nil) != (filepath.Base(f.Path) == "zz.md") {
				t.Fatalf("%s: %v", f.Path, f.Err)
			}
		}
	}
}

// A Count is shared by the directories a quota lists in turn: each takes
// what it lists, the first to hold more than is left is listed up to it
// and says so, and one listed after it lists nothing and says so.
func TestQuota_DirectoriesShareACountInTheOrderTheyAreListed(t *testing.T) {
	first, second, third, none := t.TempDir(), t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "none")
	writeNames(t, first, "c.md", "a.md", "b.md")
	writeNames(t, second, "e.md", "d.md")
	writeNames(t, third, "f.md")
	count := mdfiles.Count{Max: 4, What: "command file", Where: "a workspace", Setting: "--max-command-files"}
	q := count.Quota()
	for _, tc := range []struct {
		dir   string
		names []string
		over  *mdfiles.TooManyError
		says  string
	}{
		{first, []string{"a.md", "b.md", "c.md"}, nil, ""},
		{none, nil, nil, ""},
		{second, []string{"d.md"}, &mdfiles.TooManyError{Dir: second, Files: 2, Listed: 1, Count: count},
			"2 command files, the last 1 by name not read: at most 4 are read from a workspace (--max-command-files)"},
		{third, nil, &mdfiles.TooManyError{Dir: third, Files: 1, Listed: 0, Count: count},
			"1 command file, not read: at most 4 are read from a workspace (--max-command-files)"},
		{first, nil, &mdfiles.TooManyError{Dir: first, Files: 3, Listed: 0, Count: count},
			"3 command files, none read: at most 4 are read from a workspace (--max-command-files)"},
	} {
		files, over, err := q.List("", tc.dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := baseNames(files); !slices.Equal(got, tc.names) || (over == nil) != (tc.over == nil) || over != nil && *over != *tc.over {
			t.Fatalf("%s: %v, %+v; want %v, %+v", tc.dir, got, over, tc.names, tc.over)
		}
		if over != nil && over.Error() != tc.says {
			t.Fatalf("%s says %q, want %q", tc.dir, over.Error(), tc.says)
		}
	}
}

// A workspace's directory is listed and its files stat'ed through the
// workspace: a file or a directory that a link leads outside is an
// OutsideError, with no stat of what is outside, and one that stays
// inside is stamped as its target; the count is as without a root.
func TestList_AWorkspacesFilesStayInside(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	dir := filepath.Join(ws, ".dshd", "commands")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeNames(t, dir, "a.md", "z.md")
	writeNames(t, outside, "secret.md")
	for name, target := range map[string]string{
		filepath.Join(dir, "in.md"): "a.md", filepath.Join(dir, "out.md"): filepath.Join(outside, "secret.md"),
		filepath.Join(ws, ".claude"): outside,
	} {
		if err := os.Symlink(target, name); err != nil {
			t.Fatal(err)
		}
	}
	files, more, err := mdfiles.List(ws, dir, 3)
	if err != nil || more != 1 || !slices.Equal(baseNames(files), []string{"a.md", "in.md", "out.md"}) {
		t.Fatalf("List = %v, %d more, %v", baseNames(files), more, err)
	}
	var oe *smallfile.OutsideError
	if f := files[2]; !errors.As(f.Err, &oe) || oe.Root != ws || f.Info != nil {
		t.Fatalf("the link out: %+v", f)
	}
	if files[1].Err != nil || files[1].Stamp().ModTime != files[0].Stamp().ModTime {
		t.Fatalf("the link inside: %+v", files[1])
	}
	if st := mdfiles.StampOf(ws, files[2].Path); st.Size != -1 {
		t.Fatalf("the stamp of the link out: %+v", st)
	}
	if st := mdfiles.StampOf("", files[2].Path); st.Size != 0 || st.Type != 0 {
		t.Fatalf("the stamp of the user's link: %+v", st)
	}
	for _, d := range []string{".claude", filepath.Join(".claude", "commands")} {
		if _, _, err := mdfiles.List(ws, filepath.Join(ws, d), 3); !errors.As(err, &oe) {
			t.Fatalf("a directory that leads out (%s): %v", d, err)
		}
	}
	if files, _, err := mdfiles.List("", filepath.Join(ws, ".claude"), 3); err != nil || len(files) != 1 {
		t.Fatalf("the user's directory, linked: %v, %v", baseNames(files), err)
	}
}
