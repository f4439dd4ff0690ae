// End-to-end test of the bounds on additionalDirectories: a real dshd on
// stdio refuses a request naming more directories than
// --max-additional-directories, one longer than a path may be (and a cwd
// that is), and one (or a cwd) that is not an existing directory unless
// the client serves the files, with -32602 naming the setting or the entry, and
// takes a list at the bound.

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

// TestAdditionalDirectoriesAreBoundedInCountAndLengthAndMustExist: at
// the default bound (64) a session/new naming 64 directories is made and
// one naming 65 is refused, naming --max-additional-directories, as are a
// session/load, resume and fork naming too many; a lowered bound (3)
// refuses 4 and takes 3. An entry of 4097 bytes, a missing directory and
// a file are refused naming the entry. Nothing refused leaves a session
// on disk, and the count's refusal is logged once. Before, every list was
// taken: 200000 missing directories in each of 10 session/new grew the
// daemon to 415 MB and one session/list answer to 49 MB.
func TestAdditionalDirectoriesAreBoundedInCountAndLengthAndMustExist(t *testing.T) {
	ctx := testkit.Context(t)
	base := t.TempDir()
	dirs := make([]string, 65)
	for i := range dirs {
		dirs[i] = filepath.Join(base, fmt.Sprint(i))
		if err := os.Mkdir(dirs[i], 0o755); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	newWith := func(dirs []string) map[string]any {
		return map[string]any{"cwd": base, "mcpServers": []any{}, "additionalDirectories": dirs}
	}
	refused := func(t *testing.T, c *wire, method string, params map[string]any, words ...string) {
		t.Helper()
		e := c.callFail(ctx, method, params)
		if e.Code != -32602 || !containsAll(string(e.Data), words...) {
			t.Fatalf("%s with %d directories answered %v, want -32602 saying %q", method, len(params["additionalDirectories"].([]string)), e, words)
		}
	}
	daemon := func(t *testing.T, state string, extra ...string) (*proc, *wire) {
		p := start(t, opts{}, append([]string{"--model", "scripted", "--state-dir", state}, extra...)...)
		return p, stdioWire(p)
	}
	sessions := func(t *testing.T, state string) int {
		t.Helper()
		journals, err := filepath.Glob(filepath.Join(state, "sessions", "*.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		return len(journals)
	}

	t.Run("the default", func(t *testing.T) {
		state := t.TempDir()
		p, c := daemon(t, state)
		c.initialize(ctx, nil)
		sid := c.newSession(ctx, base)
		refused(t, c, "session/new", newWith(dirs), "more than --max-additional-directories (64)", `"setting":"--max-additional-directories"`, `"limit":64`)
		for _, method := range []string{"session/load", "session/resume", "session/fork"} {
			params := newWith(dirs)
			params["sessionId"] = sid
			refused(t, c, method, params, "more than --max-additional-directories (64)")
		}
		var res struct {
			SessionID string `json:"sessionId"`
		}
		c.call(ctx, "session/new", newWith(dirs[:64]), &res)
		if res.SessionID == "" {
			t.Fatal("session/new at the bound made no session")
		}
		if n := sessions(t, state); n != 2 {
			t.Fatalf("%d sessions on disk, want the two made", n)
		}
		log := p.stderr.String()
		if n := strings.Count(log, "more additional directories than allowed"); n != 1 || !strings.Contains(log, "setting=--max-additional-directories") {
			t.Fatalf("four refusals logged %d times, want once naming the setting:\n%s", n, log)
		}
	})

	t.Run("--max-additional-directories 3", func(t *testing.T) {
		state := t.TempDir()
		_, c := daemon(t, state, "--max-additional-directories", "3")
		c.initialize(ctx, nil)
		refused(t, c, "session/new", newWith(dirs[:4]), "4 directories, more than --max-additional-directories (3)")
		c.call(ctx, "session/new", newWith(dirs[:3]), nil)
		if n := sessions(t, state); n != 1 {
			t.Fatalf("%d sessions on disk, want the one made", n)
		}
	})

	t.Run("entries", func(t *testing.T) {
		state := t.TempDir()
		_, c := daemon(t, state)
		c.initialize(ctx, nil)
		long := "/" + strings.Repeat("d", 4096)
		refused(t, c, "session/new", newWith([]string{dirs[0], long}), "additionalDirectories[1]", "4097 bytes", "PATH_MAX")
		missing := filepath.Join(base, "missing")
		refused(t, c, "session/new", newWith([]string{missing}), "additionalDirectories[0]", "there is no directory "+missing)
		refused(t, c, "session/new", newWith([]string{dirs[0], file}), "additionalDirectories[1]", file+" is not a directory")
		// A cwd is one path too: no longer than PATH_MAX.
		e := c.callFail(ctx, "session/new", map[string]any{"cwd": long, "mcpServers": []any{}})
		if e.Code != -32602 || !containsAll(string(e.Data), `"field":"cwd"`, "4097 bytes", "PATH_MAX") {
			t.Fatalf("session/new in a cwd of 4097 bytes answered %v", e)
		}
		// And it must be a directory here, as a root is: a typo in it is
		// told at once, not by every tool the session runs.
		e = c.callFail(ctx, "session/new", map[string]any{"cwd": missing, "mcpServers": []any{}})
		if e.Code != -32602 || !containsAll(string(e.Data), `"field":"cwd"`, "there is no directory "+missing) {
			t.Fatalf("session/new in a missing cwd answered %v", e)
		}
		if n := sessions(t, state); n != 0 {
			t.Fatalf("%d sessions on disk after refusals", n)
		}
	})

	// A client that serves the files (fs/*: an editor, or a parent dshd
	// whose remote child this is) names its own directories, on a machine
	// that may not be this one: they need not exist here, and are still
	// bounded in count and length.
	t.Run("a client that serves the files", func(t *testing.T) {
		state := t.TempDir()
		_, c := daemon(t, state)
		c.initialize(ctx, map[string]any{"fs": map[string]any{"readTextFile": true, "writeTextFile": true}})
		elsewhere := []string{"/on/the/clients/machine", "/and/another"}
		c.call(ctx, "session/new", newWith(elsewhere), nil)
		c.call(ctx, "session/new", map[string]any{"cwd": "/the/clients/project", "mcpServers": []any{}}, nil)
		refused(t, c, "session/new", newWith(dirs), "more than --max-additional-directories (64)")
		refused(t, c, "session/new", newWith([]string{"/" + strings.Repeat("d", 4096)}), "additionalDirectories[0]", "PATH_MAX")
		if n := sessions(t, state); n != 2 {
			t.Fatalf("%d sessions on disk, want the two made", n)
		}
	})
}
