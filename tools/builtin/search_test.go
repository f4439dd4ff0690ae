package builtin

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestListDir(t *testing.T) {
	env, dir := testEnv(t)
	write(t, dir, "b.txt", "12345")
	write(t, dir, "a/x.go", "")
	write(t, dir, "big.bin", strings.Repeat("x", 3000))
	if err := os.Symlink("b.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	res := call(t, NewListDir(nil), env, ListDirParams{})
	if want := "a/\nb.txt  5 B\nbig.bin  2.9 KB\nlink -> b.txt\n"; res.Output != want {
		t.Errorf("output = %q, want %q", res.Output, want)
	}
	t.Run("entries are capped", func(t *testing.T) {
		res := call(t, NewListDir(&ListDirOptions{MaxEntries: 2}), env, ListDirParams{Path: "."})
		mustContain(t, res, false, "2 more entries")
	})
	t.Run("a file is not a directory", func(t *testing.T) {
		mustContain(t, call(t, NewListDir(nil), env, ListDirParams{Path: "b.txt"}), true, "not a directory")
	})
	t.Run("outside the workspace is refused", func(t *testing.T) {
		mustContain(t, call(t, NewListDir(nil), env, ListDirParams{Path: "/"}), true, "outside the workspace")
	})
}

// gitTree lays out a tree with .gitignore files of every kind.
func gitTree(t *testing.T, dir string) {
	files := map[string]string{
		".gitignore":           "*.log\n/build\ntmp/\n!keep.log\n# comment\n\\#hash\ndocs/**/draft.md\n",
		"main.go":              "package main // needle\n",
		"debug.log":            "needle",
		"keep.log":             "needle",
		"#hash":                "needle",
		"build/out.go":         "needle",
		"sub/build/gen.go":     "package build // needle (not anchored: kept)\n",
		"sub/tmp/x.go":         "needle",
		"sub/.gitignore":       "*.go\n!keep.go\n",
		"sub/keep.go":          "needle",
		"sub/drop.go":          "needle",
		"sub/notes.txt":        "needle",
		"docs/a/b/draft.md":    "needle",
		"docs/a/final.md":      "needle",
		".git/config":          "needle",
		"vendor/lib/lib.go":    "needle",
		"vendor/.gitignore":    "/lib/\n",
		"deep/a/b/c/d/file.go": "needle",
	}
	for rel, content := range files {
		write(t, dir, rel, content)
	}
}

func TestGlob(t *testing.T) {
	env, dir := testEnv(t)
	gitTree(t, dir)
	tests := []struct {
		name    string
		params  GlobParams
		want    []string
		isError bool
	}{
		{"** finds files at any depth, gitignore respected", GlobParams{Pattern: "**/*.go"},
			[]string{"deep/a/b/c/d/file.go", "main.go", "sub/keep.go"}, false},
		{"a pattern without ** stays at the top", GlobParams{Pattern: "*.go"}, []string{"main.go"}, false},
		{"negation re-includes, escapes and comments work", GlobParams{Pattern: "*"},
			[]string{".gitignore", "deep/", "docs/", "keep.log", "main.go", "sub/", "vendor/"}, false},
		{"a path narrows the search and results stay relative to the cwd", GlobParams{Pattern: "**/*.md", Path: "docs"},
			[]string{"docs/a/final.md"}, false},
		{"braces give alternatives", GlobParams{Pattern: "{sub,docs}/**/*.{txt,md}"},
			[]string{"docs/a/final.md", "sub/notes.txt"}, false},
		{"directories match with a slash", GlobParams{Pattern: "**/b"}, []string{"deep/a/b/", "docs/a/b/"}, false},
		{"no match is not an error", GlobParams{Pattern: "**/*.rs"}, nil, false},
		{"a bad pattern is an error", GlobParams{Pattern: "[z-a"}, nil, true},
		{"outside the workspace is an error", GlobParams{Pattern: "*", Path: ".."}, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, NewGlob(nil), env, tc.params)
			if res.IsError != tc.isError {
				t.Fatalf("IsError = %v: %s", res.IsError, res.Output)
			}
			if tc.isError {
				return
			}
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(res.Output), "\n") {
				if l != "" && !strings.HasPrefix(l, "No paths") {
					got = append(got, l)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("results are capped to the first paths in order", func(t *testing.T) {
		for i := range 50 {
			write(t, dir, fmt.Sprintf("many/f%02d.txt", i), "")
		}
		res := call(t, NewGlob(&GlobOptions{MaxResults: 5}), env, GlobParams{Pattern: "many/*.txt"})
		mustContain(t, res, false, "many/f00.txt\nmany/f01.txt\nmany/f02.txt\nmany/f03.txt\nmany/f04.txt\n", "capped at 5")
	})
}

func TestGrep(t *testing.T) {
	env, dir := testEnv(t)
	gitTree(t, dir)
	write(t, dir, "ctx/a.txt", "1\n2\nhit one\n4\n5\n6\n7\nhit two\nhit three\n10\n")
	write(t, dir, "bin/blob", "needle\x00binary")
	tests := []struct {
		name   string
		params GrepParams
		want   string // the output before the summary
	}{
		{"matches print path:line:text, gitignore and .git respected",
			GrepParams{Pattern: "needle", Include: "*.go"},
			"deep/a/b/c/d/file.go:1:needle\nmain.go:1:package main // needle\nsub/keep.go:1:needle\n"},
		{"binary files are skipped",
			GrepParams{Pattern: "needle", Path: "bin"}, "No matches found"},
		{"context lines and separators",
			GrepParams{Pattern: "^hit", Path: "ctx", Context: 1},
			"ctx/a.txt-2-2\nctx/a.txt:3:hit one\nctx/a.txt-4-4\n--\nctx/a.txt-7-7\nctx/a.txt:8:hit two\nctx/a.txt:9:hit three\nctx/a.txt-10-10\n"},
		{"before and after separately",
			GrepParams{Pattern: "two", Path: "ctx/a.txt", Before: 2}, "ctx/a.txt-6-6\nctx/a.txt-7-7\nctx/a.txt:8:hit two\n"},
		{"case-insensitive",
			GrepParams{Pattern: "HIT T", Path: "ctx", IgnoreCase: true}, "ctx/a.txt:8:hit two\nctx/a.txt:9:hit three\n"},
		{"the match cap keeps the first matches in path order",
			GrepParams{Pattern: "hit", Path: "ctx", MaxMatches: 2}, "ctx/a.txt:3:hit one\nctx/a.txt:8:hit two\n"},
		{"an include glob with a slash matches the relative path",
			GrepParams{Pattern: "needle", Include: "sub/**"}, "sub/keep.go:1:needle\nsub/notes.txt:1:needle\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, NewGrep(nil), env, tc.params)
			if res.IsError {
				t.Fatalf("error: %s", res.Output)
			}
			got := res.Output
			if i := strings.LastIndex(got, "\n\n"); i >= 0 {
				got = got[:i+1]
			}
			if got != tc.want {
				t.Errorf("output:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
	t.Run("a capped search says so", func(t *testing.T) {
		mustContain(t, call(t, NewGrep(nil), env, GrepParams{Pattern: "hit", Path: "ctx", MaxMatches: 2}), false, "capped")
	})
	t.Run("a bad regexp is an error", func(t *testing.T) {
		mustContain(t, call(t, NewGrep(nil), env, GrepParams{Pattern: "a("}), true, "bad pattern")
	})
	t.Run("outside the workspace is an error", func(t *testing.T) {
		mustContain(t, call(t, NewGrep(nil), env, GrepParams{Pattern: "x", Path: "/etc"}), true, "outside the workspace")
	})
}
