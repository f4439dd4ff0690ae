package mdfiles_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dshd/dshd/internal/mdfiles"
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
	files, err := mdfiles.List(dir)
	if err != nil {
		t.Fatal(err)
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
	if files, err := mdfiles.List(filepath.Join(dir, "none")); files != nil || err != nil {
		t.Fatalf("a missing dir: %v, %v", files, err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := mdfiles.List(file); err == nil {
		t.Fatal("listing a file: no error")
	}
}

func TestStampOf_AFileAsListedAndNoFileAsSizeMinusOne(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte("text"), 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := mdfiles.List(dir)
	if err != nil || len(files) != 1 {
		t.Fatal(files, err)
	}
	if got := mdfiles.StampOf(files[0].Path); got != files[0].Stamp() || got.Type != 0 {
		t.Fatalf("StampOf = %+v, listed %+v", got, files[0].Stamp())
	}
	gone := mdfiles.StampOf(filepath.Join(dir, "gone.json"))
	if gone.Size != -1 || gone.Path != filepath.Join(dir, "gone.json") {
		t.Fatalf("the stamp of no file: %+v", gone)
	}
	if got := mdfiles.StampOf(dir); !got.Type.IsDir() {
		t.Fatalf("a directory's stamp has the type %v", got.Type)
	}
}
