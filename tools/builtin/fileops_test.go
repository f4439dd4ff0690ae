package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/permission"
	"github.com/dshd/dshd/tools/workspace"
)

// failingFS is a FileSystem whose every call fails with err.
type failingFS struct{ err error }

func (f failingFS) ReadTextFile(context.Context, string, int, int) (string, error) {
	return "", f.err
}
func (f failingFS) WriteTextFile(context.Context, string, string) error { return f.err }

// recordingPermission answers with decision and records the requests.
type recordingPermission struct {
	decision tools.Decision
	reqs     []tools.PermissionRequest
}

func (r *recordingPermission) Check(_ context.Context, req tools.PermissionRequest) (tools.Decision, error) {
	r.reqs = append(r.reqs, req)
	return r.decision, nil
}

func mustContain(t *testing.T, res *tools.Result, isErr bool, subs ...string) {
	t.Helper()
	if res.IsError != isErr {
		t.Errorf("IsError = %v, want %v; output:\n%s", res.IsError, isErr, res.Output)
	}
	for _, s := range subs {
		if !strings.Contains(res.Output, s) {
			t.Errorf("output does not contain %q:\n%s", s, res.Output)
		}
	}
}

// numbered is n lines, line i written by format from i.
func numbered(n int, format string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, format, i)
	}
	return b.String()
}

func TestReadFile(t *testing.T) {
	env, dir := testEnv(t)
	write(t, dir, "src/a.txt", numbered(30, "line %d\n"))
	write(t, dir, "long.txt", strings.Repeat("x", 5000)+"\nshort\n")
	write(t, dir, "bin.dat", "PK\x03\x04\x00\x00binary")
	write(t, dir, "empty.txt", "")
	tool := NewReadFile(&ReadFileOptions{Limit: 10, MaxLineLength: 100})

	t.Run("lines are numbered like cat -n and the next offset is given", func(t *testing.T) {
		res := call(t, tool, env, ReadFileParams{Path: "src/a.txt"})
		mustContain(t, res, false, "     1\tline 1\n", "    10\tline 10\n", "offset=11")
		if strings.Contains(res.Output, "line 11") {
			t.Error("default limit not applied")
		}
		if len(res.Locations) != 1 || res.Locations[0].Path != filepath.Join(dir, "src/a.txt") || res.Locations[0].Line != 1 {
			t.Errorf("locations = %+v", res.Locations)
		}
	})
	t.Run("offset and limit select a window", func(t *testing.T) {
		res := call(t, tool, env, ReadFileParams{Path: filepath.Join(dir, "src/a.txt"), Offset: 28, Limit: 5})
		mustContain(t, res, false, "    28\tline 28\n", "    30\tline 30\n")
		if strings.Contains(res.Output, "offset=") || res.Locations[0].Line != 28 {
			t.Errorf("window at the end of the file: %q %+v", res.Output, res.Locations)
		}
	})
	t.Run("an offset past the end says so", func(t *testing.T) {
		mustContain(t, call(t, tool, env, ReadFileParams{Path: "src/a.txt", Offset: 99}), false, "fewer than 99 lines")
	})
	t.Run("long lines are cut", func(t *testing.T) {
		res := call(t, tool, env, ReadFileParams{Path: "long.txt"})
		mustContain(t, res, false, "[line cut]", "     2\tshort")
		if len(res.Output) > 400 {
			t.Errorf("output is %d bytes", len(res.Output))
		}
	})
	t.Run("a binary file is an error", func(t *testing.T) {
		mustContain(t, call(t, tool, env, ReadFileParams{Path: "bin.dat"}), true, "binary")
	})
	t.Run("an empty file says so", func(t *testing.T) {
		mustContain(t, call(t, tool, env, ReadFileParams{Path: "empty.txt"}), false, "empty")
	})
	t.Run("a missing file is an error", func(t *testing.T) {
		mustContain(t, call(t, tool, env, ReadFileParams{Path: "nope.txt"}), true, "nope.txt does not exist")
	})
	t.Run("a directory is an error pointing to list_dir", func(t *testing.T) {
		mustContain(t, call(t, tool, env, ReadFileParams{Path: "src"}), true, "src is a directory", "list_dir")
	})
	t.Run("a path outside the workspace is an error naming it", func(t *testing.T) {
		mustContain(t, call(t, tool, env, ReadFileParams{Path: "../../etc/passwd"}), true, "outside the workspace", "../../etc/passwd")
	})
	t.Run("bad arguments are an error result", func(t *testing.T) {
		mustContain(t, call(t, tool, env, `{"file_path":"x"}`), true, "unknown field")
		mustContain(t, call(t, tool, env, `{}`), true, "path is required")
		mustContain(t, call(t, tool, env, ReadFileParams{Path: "src/a.txt", Offset: -1}), true, "negative")
	})
	t.Run("a failing file system is an error result", func(t *testing.T) {
		bad := *env
		bad.FS = failingFS{errors.New("editor went away")}
		mustContain(t, call(t, tool, &bad, ReadFileParams{Path: "src/a.txt"}), true, "editor went away")
	})
	t.Run("the title names the file and window", func(t *testing.T) {
		if got := tool.(tools.Titler).Title(json.RawMessage(`{"path":"a.go","offset":5,"limit":10}`)); got != "Read a.go (lines 5-14)" {
			t.Errorf("title = %q", got)
		}
	})
}

func TestReadFilePagesAHugeFile(t *testing.T) {
	env, dir := testEnv(t)
	write(t, dir, "big.txt", numbered(200_000, "%07d\n"))
	fsys := workspace.NewLocalFS(env.Workspace)
	fsys.MaxReadBytes = 4 << 10 // the whole file would not fit
	env.FS = fsys
	res := call(t, NewReadFile(nil), env, ReadFileParams{Path: "big.txt", Offset: 150_000, Limit: 2})
	mustContain(t, res, false, "150000\t0150000\n", "150001\t0150001\n")
	res = call(t, NewReadFile(nil), env, ReadFileParams{Path: "big.txt"})
	mustContain(t, res, true, "too large", "fewer lines")
}

func TestWriteFile(t *testing.T) {
	env, dir := testEnv(t)
	tool := NewWriteFile()
	t.Run("a new file is created with its directories and a diff without old text", func(t *testing.T) {
		perm := &recordingPermission{decision: tools.Allowed}
		env := *env
		env.Permission = perm
		res := call(t, tool, &env, WriteFileParams{Path: "a/b/new.txt", Content: "hi\n"})
		mustContain(t, res, false, "Created a/b/new.txt (1 line, 3 bytes)")
		if res.Title != "Create a/b/new.txt" || perm.reqs[0].Title != res.Title {
			t.Errorf("title = %q, asked as %q", res.Title, perm.reqs[0].Title)
		}
		if got := read(t, dir, "a/b/new.txt"); got != "hi\n" {
			t.Errorf("content = %q", got)
		}
		path := filepath.Join(dir, "a/b/new.txt")
		if len(res.Content) != 1 || res.Content[0].Type != tools.ContentDiff || res.Content[0].OldText != nil || res.Content[0].Path != path {
			t.Errorf("content = %+v", res.Content)
		}
		if len(perm.reqs) != 1 || perm.reqs[0].Effect != tools.EffectEdit || perm.reqs[0].ToolName != WriteFileName || perm.reqs[0].Content[0].Type != tools.ContentDiff || perm.reqs[0].ToolCallID != "call-1" {
			t.Errorf("permission requests = %+v", perm.reqs)
		}
	})
	t.Run("an existing file's diff carries its old text", func(t *testing.T) {
		write(t, dir, "old.txt", "before")
		res := call(t, tool, env, WriteFileParams{Path: "old.txt", Content: "after"})
		mustContain(t, res, false, "Wrote old.txt")
		if old := res.Content[0].OldText; old == nil || *old != "before" {
			t.Errorf("oldText = %v", old)
		}
		if res.Title != "Write old.txt" {
			t.Errorf("title = %q", res.Title)
		}
	})
	t.Run("the content the file has already is not written, nor asked for", func(t *testing.T) {
		write(t, dir, "same.txt", "same")
		perm := &recordingPermission{decision: tools.Allowed}
		env := *env
		env.Permission = perm
		res := call(t, tool, &env, WriteFileParams{Path: "same.txt", Content: "same"})
		mustContain(t, res, false, "same.txt already has this content; nothing written")
		if len(perm.reqs) != 0 || res.Content != nil || len(res.Locations) != 1 || res.Locations[0].Path != filepath.Join(dir, "same.txt") {
			t.Errorf("asked %d times; result %+v", len(perm.reqs), res)
		}
	})
	t.Run("a rejection leaves the file alone", func(t *testing.T) {
		write(t, dir, "keep.txt", "keep")
		env := *env
		env.Permission = permission.NewPolicy(permission.ModeAsk, permission.AskerFunc(func(context.Context, tools.PermissionRequest) (permission.Answer, error) {
			return permission.RejectOnce, nil
		}))
		mustContain(t, call(t, tool, &env, WriteFileParams{Path: "keep.txt", Content: "x"}), true, "the user rejected this edit (Write keep.txt)")
		if got := read(t, dir, "keep.txt"); got != "keep" {
			t.Errorf("content = %q", got)
		}
	})
	t.Run("a cancelled permission ends the call as cancelled", func(t *testing.T) {
		env := *env
		env.Permission = &recordingPermission{decision: tools.Cancelled}
		_, err := callErr(t, tool, &env, WriteFileParams{Path: "c.txt", Content: "x"})
		if !errors.Is(err, tools.ErrCancelled) || !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("a path outside the workspace is refused before asking", func(t *testing.T) {
		perm := &recordingPermission{decision: tools.Allowed}
		env := *env
		env.Permission = perm
		mustContain(t, call(t, tool, &env, WriteFileParams{Path: "/tmp/dshd-escape.txt", Content: "x"}), true, "outside the workspace")
		if len(perm.reqs) != 0 {
			t.Error("asked permission for a path outside")
		}
	})
	t.Run("a failing file system is an error result", func(t *testing.T) {
		env := *env
		env.FS = failingFS{errors.New("disk on fire")}
		mustContain(t, call(t, tool, &env, WriteFileParams{Path: "x.txt", Content: "x"}), true, "disk on fire")
	})
}

func TestEditFile(t *testing.T) {
	env, dir := testEnv(t)
	tool := NewEditFile()
	src := "package main\n\nfunc a() { return 1 }\nfunc b() { return 1 }\n"
	tests := []struct {
		name    string
		params  EditFileParams
		isErr   bool
		output  []string
		content string // the file afterwards
	}{
		{"a unique match is replaced",
			EditFileParams{OldText: "func a() { return 1 }", NewText: "func a() { return 2 }"}, false,
			[]string{"1 replacement"}, "package main\n\nfunc a() { return 2 }\nfunc b() { return 1 }\n"},
		{"a missing old text is an error and changes nothing",
			EditFileParams{OldText: "func c()", NewText: "x"}, true,
			[]string{"not found", "nothing was changed"}, src},
		{"a non-unique old text is an error with the count",
			EditFileParams{OldText: "return 1", NewText: "return 3"}, true,
			[]string{"matches 2 times", "replace_all"}, src},
		{"replace_all replaces every match",
			EditFileParams{OldText: "return 1", NewText: "return 3", ReplaceAll: true}, false,
			[]string{"2 replacement"}, "package main\n\nfunc a() { return 3 }\nfunc b() { return 3 }\n"},
		{"several edits apply in order",
			EditFileParams{Edits: []Edit{
				{OldText: "func a()", NewText: "func alpha()"},
				{OldText: "func alpha() { return 1 }", NewText: "func alpha() { return 9 }"},
				{OldText: "package main", NewText: "package x"},
			}}, false,
			[]string{"3 edits"}, "package x\n\nfunc alpha() { return 9 }\nfunc b() { return 1 }\n"},
		{"a failing edit among several changes nothing and is named",
			EditFileParams{Edits: []Edit{
				{OldText: "func a()", NewText: "func alpha()"},
				{OldText: "func zzz()", NewText: "x"},
			}}, true,
			[]string{"edit 2 of 2", "not found"}, src},
		{"identical old and new text is an error",
			EditFileParams{OldText: "package main", NewText: "package main"}, true,
			[]string{"the same"}, src},
		{"both forms at once is an error",
			EditFileParams{OldText: "a", NewText: "b", Edits: []Edit{{OldText: "c", NewText: "d"}}}, true,
			[]string{"not both"}, src},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			write(t, dir, "main.go", src)
			tc.params.Path = "main.go"
			res := call(t, tool, env, tc.params)
			mustContain(t, res, tc.isErr, tc.output...)
			if got := read(t, dir, "main.go"); got != tc.content {
				t.Errorf("file = %q, want %q", got, tc.content)
			}
			if !tc.isErr {
				d := res.Content[0]
				if d.Type != tools.ContentDiff || d.OldText == nil || *d.OldText != src || d.NewText != tc.content {
					t.Errorf("diff = %+v", d)
				}
			}
		})
	}
	t.Run("overlapping matches are not unique", func(t *testing.T) {
		write(t, dir, "o.txt", "aaa")
		mustContain(t, call(t, tool, env, EditFileParams{Path: "o.txt", OldText: "aa", NewText: "b"}), true, "matches 2 times")
	})
	t.Run("windows line endings match text written with \\n", func(t *testing.T) {
		write(t, dir, "crlf.txt", "one\r\ntwo\r\nthree\r\n")
		call(t, tool, env, EditFileParams{Path: "crlf.txt", OldText: "one\ntwo", NewText: "1\n2"})
		if got := read(t, dir, "crlf.txt"); got != "1\r\n2\r\nthree\r\n" {
			t.Errorf("file = %q", got)
		}
	})
	t.Run("the location is the first changed line", func(t *testing.T) {
		write(t, dir, "main.go", src)
		res := call(t, tool, env, EditFileParams{Path: "main.go", OldText: "func b()", NewText: "func bb()"})
		if res.Locations[0].Line != 4 || res.Title != "Edit main.go" {
			t.Errorf("locations = %+v, title %q", res.Locations, res.Title)
		}
	})
	t.Run("a missing file points to write_file", func(t *testing.T) {
		mustContain(t, call(t, tool, env, EditFileParams{Path: "none.go", OldText: "a", NewText: "b"}), true, "none.go does not exist; use write_file to create it")
	})
	t.Run("a rejection leaves the file alone", func(t *testing.T) {
		write(t, dir, "main.go", src)
		env := *env
		env.Permission = permission.NewPolicy(permission.ModeAsk, permission.AskerFunc(func(context.Context, tools.PermissionRequest) (permission.Answer, error) {
			return permission.RejectOnce, nil
		}))
		mustContain(t, call(t, tool, &env, EditFileParams{Path: "main.go", OldText: "package main", NewText: "package y"}), true, "the user rejected")
		if got := read(t, dir, "main.go"); got != src {
			t.Errorf("file = %q", got)
		}
	})
	t.Run("a failing file system is an error result", func(t *testing.T) {
		env := *env
		env.FS = failingFS{errors.New("permission denied by editor")}
		mustContain(t, call(t, tool, &env, EditFileParams{Path: "main.go", OldText: "a", NewText: "b"}), true, "permission denied by editor")
	})
}
