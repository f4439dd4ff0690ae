//go:build unix

package acpprovider_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshd/dshd/subagents"
)

// gitRepo makes a repository with two commits of NOTES.txt and returns its
// path and the first commit.
func gitRepo(t *testing.T) (dir, first string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir = t.TempDir()
	run := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("init", "--quiet")
	os.WriteFile(filepath.Join(dir, "NOTES.txt"), []byte("first version\n"), 0o600)
	run("add", ".")
	run("commit", "--quiet", "-m", "one")
	first = run("rev-parse", "HEAD")
	os.WriteFile(filepath.Join(dir, "NOTES.txt"), []byte("second version\n"), 0o600)
	run("commit", "--quiet", "-am", "two")
	return dir, first
}

func TestCheckout_AChildOnItsOwnCheckoutReadsTheRepositoryNotTheParentsFiles(t *testing.T) {
	repo, first := gitRepo(t)
	script := filepath.Join(t.TempDir(), "read.json")
	os.WriteFile(script, []byte(`{"rules":[
	 {"user":"read the notes","step":0,"toolCalls":[{"name":"read_file","arguments":{"path":"NOTES.txt"}}]},
	 {"user":"read the notes","step":1,"text":"notes say: {{tool}}"}]}`), 0o600)
	d := remoteDshd(t, script, nil, "--mode", "yolo")
	p := newProvider(t, nil)
	parent := newParent(t, parentOpts{})
	// The parent's workspace has a NOTES.txt of its own, which the child
	// must not see.
	os.WriteFile(filepath.Join(parent.Scope.Cwd, "NOTES.txt"), []byte("the parent's notes\n"), 0o600)
	for _, tc := range []struct{ rev, want string }{{"", "second version"}, {first, "first version"}} {
		opts := map[string]string{"address": wsOf(d.addr), "repo": repo}
		if tc.rev != "" {
			opts["rev"] = tc.rev
		}
		res := ask(t, p, parent, "read the notes", opts)
		if res.StopReason != subagents.StopCompleted || !strings.Contains(res.Output, tc.want) || strings.Contains(res.Output, "parent") {
			t.Fatalf("rev %q: %+v", tc.rev, res)
		}
	}
	res := ask(t, p, parent, "read the notes", map[string]string{"address": wsOf(d.addr), "repo": repo, "rev": "no-such-rev"})
	if res.StopReason != subagents.StopError || !strings.Contains(res.Diagnostic, "no-such-rev") {
		t.Fatalf("a revision that does not exist: %+v", res)
	}
}

// An agent that does not clone the repository (only a dshd child does)
// would work in the parent's cwd, unconfined and unseen by the parent's
// gate: the run fails before any prompt, naming repo=.
func TestCheckout_AnAgentThatMakesNoCheckoutFailsTheRunBeforeAnyPrompt(t *testing.T) {
	p := newProvider(t, nil)
	parent := newParent(t, parentOpts{})
	opts := fakeBinding(modeAgent)
	opts["repo"] = "https://example.com/r.git"
	// "session" would answer with the parent's cwd the agent was given.
	res := ask(t, p, parent, "session", opts)
	if res.StopReason != subagents.StopError || res.Output != "" || !strings.Contains(res.Diagnostic, "made no checkout of its own for the binding's repo=") || !strings.Contains(res.Diagnostic, parent.Scope.Cwd) {
		t.Fatalf("a repo= run on an agent that ignores it: %+v", res)
	}
}
