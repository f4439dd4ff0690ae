package search

import (
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dshd/dshd/tools/internal/tooltest"
)

// write is tooltest.Write.
var write = tooltest.Write

// readAll reads and closes what open returned.
func readAll(r io.ReadCloser, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// TestGrepMatchesALineByLineReference searches random files that span many
// buffer chunks and compares with a naive line-by-line search.
func TestGrepMatchesALineByLineReference(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"alpha", "beta", "gamma", "needle", "delta", "", "x", "needle needle"}
	for f := range 3 {
		var b strings.Builder
		lines := 300 + rng.IntN(1500)
		for range lines {
			n := rng.IntN(12)
			if rng.IntN(100) == 0 {
				n = 300 // some lines longer than the smaller buffers
			}
			for w := range n {
				if w > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(words[rng.IntN(len(words))])
			}
			b.WriteByte('\n')
		}
		content := b.String()
		if f%2 == 1 {
			content = strings.TrimSuffix(content, "\n") // no final newline
		}
		path := write(t, dir, fmt.Sprintf("f%d.txt", f), content)
		for _, pat := range []string{"needle", "^gamma", "delta$", "^$", `a\s+b`, "lph"} {
			re := regexp.MustCompile("(?m)" + pat)
			for _, ctx := range [][2]int{{0, 0}, {2, 3}} {
				want := referenceGrep(content, re, ctx[0], ctx[1])
				// Tiny buffers put chunk boundaries everywhere.
				for _, chunk := range []int{16, 100, 4096, 0} {
					s := &Grep{Re: re, Before: ctx[0], After: ctx[1], MaxMatches: 1 << 30, MaxLine: 1 << 20, MaxLineBytes: 16 << 20, chunk: chunk}
					hits, binary, err := searchFile(s, path)
					if err != nil || binary {
						t.Fatal(err, binary)
					}
					if !slices.Equal(hits.Lines, want) {
						t.Fatalf("file %d pattern %q context %v chunk %d: %d lines, want %d; first difference at %d",
							f, pat, ctx, chunk, len(hits.Lines), len(want), firstDiff(hits.Lines, want))
					}
				}
			}
		}
	}
}

func searchFile(s *Grep, path string) (Hits, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return Hits{}, false, err
	}
	defer f.Close()
	return s.Search(f)
}

func referenceGrep(content string, re *regexp.Regexp, before, after int) []Line {
	lines := strings.Split(content, "\n")
	if strings.HasSuffix(content, "\n") {
		lines = lines[:len(lines)-1]
	}
	var out []Line
	last := 0
	for i, l := range lines {
		if !re.MatchString(l) {
			continue
		}
		for j := max(i-before, last); j < i; j++ {
			out = append(out, Line{j + 1, lines[j], false})
		}
		out = append(out, Line{i + 1, l, true})
		last = i + 1
		for j := i + 1; j < len(lines) && j <= i+after && !re.MatchString(lines[j]); j++ {
			out = append(out, Line{j + 1, lines[j], false})
			last = j + 1
		}
	}
	return out
}

func firstDiff(a, b []Line) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestGitignoreRules(t *testing.T) {
	rules := parseGitignore("*.o\n/root.txt\nbuild/\n!important.o\ndocs/**/tmp\nlogs/**\n\\!bang\ntrailing   \n")
	s := (*ignoreStack)(nil).push("", rules)
	nested := s.push("pkg", parseGitignore("!*.o\n/local\n"))
	tests := []struct {
		stack *ignoreStack
		path  string
		isDir bool
		want  bool
	}{
		{s, "a.o", false, true},
		{s, "deep/x/a.o", false, true},
		{s, "important.o", false, false},
		{s, "root.txt", false, true},
		{s, "sub/root.txt", false, false},
		{s, "build", true, true},
		{s, "build", false, false},
		{s, "x/build", true, true},
		{s, "docs/tmp", false, true},
		{s, "docs/a/b/tmp", true, true},
		{s, "logs", true, false},
		{s, "logs/a/b.txt", false, true},
		{s, "!bang", false, true},
		{s, "trailing", false, true},
		{nested, "pkg/a.o", false, false},
		{nested, "pkg/local", false, true},
		{nested, "local", false, false},
		{nested, "other/a.o", false, true},
	}
	for _, tc := range tests {
		if got := tc.stack.ignored(tc.path, tc.isDir); got != tc.want {
			t.Errorf("ignored(%q, dir=%v) = %v, want %v", tc.path, tc.isDir, got, tc.want)
		}
	}
}

func TestGlobPatterns(t *testing.T) {
	tests := []struct {
		pattern, path string
		want          bool
	}{
		{"**/*.go", "main.go", true},
		{"**/*.go", "a/b/main.go", true},
		{"*.go", "a/main.go", false},
		{"a/**/z", "a/z", true},
		{"a/**/z", "a/b/c/z", true},
		{"a/**", "a/b/c", true},
		{"src/*.{ts,tsx}", "src/x.tsx", true},
		{"src/*.{ts,tsx}", "src/x.js", false},
		{"?.txt", "a.txt", true},
		{"[ab].txt", "c.txt", false},
		{"test*", "testing", true},
	}
	for _, tc := range tests {
		g, err := CompileGlob(tc.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got := g.Match(tc.path); got != tc.want {
			t.Errorf("%q matches %q = %v, want %v", tc.pattern, tc.path, got, tc.want)
		}
	}
}

func TestWalk_StaysInsideItsRoot(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	write(t, outside, "secret.txt", "SECRET")
	write(t, dir, "a/inside.txt", "inside")
	if err := os.Symlink(outside, filepath.Join(dir, "a", "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(dir, "a", "leak.txt")); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	var mu sync.Mutex
	seen := map[string]string{}
	w := &Walker{Root: root, Visit: func(rel string, d fs.DirEntry, dir *Dir) {
		got := d.Type().String()
		if !d.IsDir() {
			b, err := readAll(dir.Open(d.Name()))
			got = string(b)
			if err != nil {
				got = "refused"
			}
		}
		mu.Lock()
		seen[rel] = got
		mu.Unlock()
	}}
	if err := w.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "d---------", "a/inside.txt": "inside", "a/out": "refused", "a/leak.txt": "refused"}
	if !maps.Equal(seen, want) {
		t.Fatalf("visited %v, want %v: symlinks are reported, never followed or read", seen, want)
	}
}

// walkFiles walks dir from start with .gitignore, bounded by limits, and
// returns the files it visits, by path, and the ignore files it could not
// use.
func walkFiles(t *testing.T, dir, start string, limits Limits) ([]string, []string) {
	t.Helper()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	var mu sync.Mutex
	var files []string
	w := &Walker{Root: root, Start: start, Gitignore: true, Limits: limits, Visit: func(rel string, d fs.DirEntry, _ *Dir) {
		if !d.IsDir() {
			mu.Lock()
			files = append(files, rel)
			mu.Unlock()
		}
	}}
	tooltest.Within(t, "a walk of "+dir+" from "+start, func() {
		if err := w.Run(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
	var unused []string
	for _, e := range w.IgnoreFileErrors() {
		unused = append(unused, e.Error())
	}
	slices.Sort(files)
	return files, unused
}

// A .gitignore over DefaultMaxIgnoreFileBytes is not used, and said; a
// .git that is a file (a linked worktree's) has no exclude file and is no
// mistake; the rules of a .gitignore that is used apply.
func TestWalk_ALargeIgnoreFileIsSaidAndAGitFileIsNone(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, ".git", "gitdir: /somewhere/else\n")
	write(t, dir, "a/.gitignore", "*.log\n")
	write(t, dir, "a/x.log", "ignored")
	write(t, dir, "b/.gitignore", "*.log\n"+strings.Repeat("#", DefaultMaxIgnoreFileBytes))
	write(t, dir, "b/y.log", "not ignored")
	files, unused := walkFiles(t, dir, "", Limits{})
	if slices.Contains(files, "a/x.log") || !slices.Contains(files, "b/y.log") {
		t.Fatalf("visited %v", files)
	}
	// Without a name for the setting, the field's own names the bound.
	want := fmt.Sprintf("b/.gitignore: %d bytes; an ignore file may have at most %d (MaxIgnoreFileBytes)", DefaultMaxIgnoreFileBytes+6, DefaultMaxIgnoreFileBytes)
	if len(unused) != 1 || unused[0] != want {
		t.Fatalf("unused ignore files %q, want %q", unused, want)
	}
}

// The walk's Limits set the bound: an ignore file of the bound's size is
// used, one byte more is not, and the setting is named.
func TestWalk_TheIgnoreFileBoundIsTheLimitsAndNamesItsSetting(t *testing.T) {
	dir := t.TempDir()
	rules := "*.log\n" + strings.Repeat("#", 94) // 100 bytes
	write(t, dir, "a/.gitignore", rules)
	write(t, dir, "a/x.log", "ignored")
	write(t, dir, "b/.gitignore", rules+"\n")
	write(t, dir, "b/y.log", "not ignored")
	files, unused := walkFiles(t, dir, "", Limits{MaxIgnoreFileBytes: 100, Settings: Settings{MaxIgnoreFileBytes: "--max-ignore-file-bytes"}})
	if slices.Contains(files, "a/x.log") || !slices.Contains(files, "b/y.log") {
		t.Fatalf("visited %v", files)
	}
	want := "b/.gitignore: 101 bytes; an ignore file may have at most 100 (--max-ignore-file-bytes)"
	if len(unused) != 1 || unused[0] != want {
		t.Fatalf("unused ignore files %q, want %q", unused, want)
	}
}
