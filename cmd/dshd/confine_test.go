// End-to-end tests of the workspace's confinement through a real dshd:
// a symlinked AGENTS.md pointing outside stays out of the system prompt
// (finding 10 of issue 10), and in accept-edits an edit of .git/config is
// asked about like a command (finding 8).

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
	"github.com/dshd/dshd/internal/testkit"
)

// promptIn is `dshd prompt` against srv in cwd.
func promptIn(t testing.TB, srv *openaitest.Server, cwd string, extra ...string) []string {
	args := []string{"prompt", "--model-url", srv.URL(), "--model", "m", "--api-key-env", "", "--state-dir", t.TempDir(), "--cwd", cwd}
	return append(args, extra...)
}

// systemPrompt is the system message of the model's first request.
func systemPrompt(t testing.TB, srv *openaitest.Server) string {
	t.Helper()
	reqs := srv.ChatRequests()
	if len(reqs) == 0 || len(reqs[0].Messages) == 0 || reqs[0].Messages[0].Role != "system" {
		t.Fatalf("the model got no system message: %d requests", len(reqs))
	}
	var s string
	if err := json.Unmarshal(reqs[0].Messages[0].Content, &s); err != nil {
		t.Fatalf("system content %s: %v", reqs[0].Messages[0].Content, err)
	}
	return s
}

func TestAgentsMDIsReadOnlyFromInsideTheWorkspace(t *testing.T) {
	outside := t.TempDir()
	secretFile := testkit.Write(t, outside, "secret.md", "SECRET-FROM-OUTSIDE")
	tests := []struct {
		name   string
		setup  func(t *testing.T, cwd string)
		want   string // in the system prompt
		refuse string // never in it
	}{
		{"a plain AGENTS.md is read", func(t *testing.T, cwd string) {
			testkit.Write(t, cwd, "AGENTS.md", "PROJECT-RULES")
		}, "PROJECT-RULES", ""},
		{"a symlink to a file inside the workspace is read", func(t *testing.T, cwd string) {
			if err := os.Mkdir(filepath.Join(cwd, "docs"), 0o755); err != nil {
				t.Fatal(err)
			}
			testkit.Write(t, filepath.Join(cwd, "docs"), "agents.md", "RULES-VIA-LINK")
			if err := os.Symlink("docs/agents.md", filepath.Join(cwd, "AGENTS.md")); err != nil {
				t.Fatal(err)
			}
		}, "RULES-VIA-LINK", ""},
		{"a symlink to a file outside is not read", func(t *testing.T, cwd string) {
			if err := os.Symlink(secretFile, filepath.Join(cwd, "AGENTS.md")); err != nil {
				t.Fatal(err)
			}
		}, "", "SECRET-FROM-OUTSIDE"},
		{"a relative symlink climbing out is not read", func(t *testing.T, cwd string) {
			rel, err := filepath.Rel(cwd, secretFile)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(rel, filepath.Join(cwd, "AGENTS.md")); err != nil {
				t.Fatal(err)
			}
		}, "", "SECRET-FROM-OUTSIDE"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cwd := t.TempDir()
			tc.setup(t, cwd)
			srv := fakeModel(t)
			srv.Enqueue(openaitest.Text("ok"))
			code, _, stderr := runDshd(t, nil, promptIn(t, srv, cwd, "hi")...)
			if code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", code, stderr)
			}
			sys := systemPrompt(t, srv)
			if tc.want != "" && !strings.Contains(sys, tc.want) {
				t.Fatalf("the system prompt lacks %q:\n%s", tc.want, sys)
			}
			if tc.refuse != "" && strings.Contains(sys, tc.refuse) {
				t.Fatalf("the system prompt holds the file outside the workspace:\n%s", sys)
			}
		})
	}
}

func TestAcceptEditsAsksBeforeEditingGitConfig(t *testing.T) {
	const config = "[core]\n\trepositoryformatversion = 0\n"
	const payload = "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = \"touch pwned\"\n"
	tests := []struct {
		name, path string
		asked      bool
	}{
		{".git/config asks", ".git/config", true},
		{"a hook asks", ".git/hooks/pre-commit", true},
		{"a nested repository's config asks", "vendor/lib/.git/config", true},
		{"dshd's own directory asks", ".dshd/config.json", true},
		{"an ordinary file does not", "src/config", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cwd := t.TempDir()
			target := filepath.Join(cwd, filepath.FromSlash(tc.path))
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				t.Fatal(err)
			}
			testkit.Write(t, filepath.Dir(target), filepath.Base(target), config)
			srv := fakeModel(t)
			args, _ := json.Marshal(map[string]string{"path": tc.path, "content": payload})
			srv.Enqueue(
				openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "call_1", Name: "write_file", Arguments: string(args)}}},
				openaitest.Text("done"),
			)
			code, _, stderr := runDshd(t, nil, promptIn(t, srv, cwd, "--mode", "accept-edits", "configure it")...)
			if code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", code, stderr)
			}
			got, err := os.ReadFile(target)
			if err != nil {
				t.Fatal(err)
			}
			asked := strings.Contains(stderr, "? Write "+tc.path+": rejected")
			switch {
			case tc.asked && !asked:
				t.Fatalf("no permission question in accept-edits; stderr:\n%s", stderr)
			case tc.asked && string(got) != config:
				t.Fatalf("%s was written although the question was rejected:\n%s", tc.path, got)
			case !tc.asked && (asked || string(got) != payload):
				t.Fatalf("an ordinary edit in accept-edits: asked=%v, content %q; stderr:\n%s", asked, got, stderr)
			}
		})
	}
}
