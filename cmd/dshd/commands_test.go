// End-to-end tests of slash commands (issue 12 item 9): command files in a
// temp workspace, a real dshd on stdio, the fake OpenAI server.

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
	"github.com/dshd/dshd/internal/testkit"
)

// commandsOf returns the command names of the last
// available_commands_update among ns, and whether there was one.
func commandsOf(ns []note) ([]string, map[string]string, bool) {
	var names []string
	hints := map[string]string{}
	found := false
	for _, n := range ns {
		if n.Kind != "available_commands_update" {
			continue
		}
		var u struct {
			AvailableCommands []struct {
				Name  string `json:"name"`
				Input *struct {
					Hint string `json:"hint"`
				} `json:"input"`
			} `json:"availableCommands"`
		}
		_ = json.Unmarshal(n.Update, &u)
		names, found = nil, true
		for _, c := range u.AvailableCommands {
			names = append(names, c.Name)
			if c.Input != nil {
				hints[c.Name] = c.Input.Hint
			}
		}
	}
	return names, hints, found
}

func TestCommands_AFileIsAdvertisedAndItsBodyReachesTheModelWithTheArguments(t *testing.T) {
	ctx := testkit.Context(t)
	ws := t.TempDir()
	dir := filepath.Join(ws, ".dshd", "commands")
	os.MkdirAll(dir, 0o755)
	testkit.Write(t, dir, "review.md", "---\ndescription: Review a pull request\nargument-hint: PR [PRIORITY]\nallowed-tools: [read_file, grep]\nmodel: big\n---\nReview PR #$1 at priority $2. All: $ARGUMENTS\n")
	srv, c, sid := modelSession(ctx, t, ws, answer("ok"))
	ups := c.waitUpdates(ctx, sid, func(ns []note) bool { _, _, ok := commandsOf(ns); return ok })
	names, hints, _ := commandsOf(ups)
	for _, want := range []string{"compact", "init", "agents", "review"} {
		if !slices.Contains(names, want) {
			t.Fatalf("advertised %v, want %s among them", names, want)
		}
	}
	if hints["review"] != "PR [PRIORITY]" {
		t.Fatalf("hints %v", hints)
	}
	c.endTurn(ctx, sid, "/review 42 high")
	first := srv.ChatRequests()[0]
	if got := first.LastUserText(); got != "Review PR #42 at priority high. All: 42 high" {
		t.Fatalf("the model got %q", got)
	}
	if first.Model != "big" || !slices.Equal(toolNames(first), []string{"grep", "read_file"}) {
		t.Fatalf("the command's turn asked %q with tools %v", first.Model, toolNames(first))
	}
	// An unknown /word is text for the model, as before.
	c.prompt(ctx, sid, "/nonsense stays as typed")
	reqs := srv.ChatRequests()
	if got := reqs[len(reqs)-1].LastUserText(); got != "/nonsense stays as typed" {
		t.Fatalf("the model got %q", got)
	}
	if r := reqs[len(reqs)-1]; r.Model != "m" || len(r.Tools) <= 2 {
		t.Fatalf("the next turn kept the command's model %q or tools %v", r.Model, toolNames(r))
	}

	// A new command file is advertised while the session runs.
	testkit.Write(t, dir, "later.md", "Do it later.\n")
	c.prompt(ctx, sid, "hello")
	ups = c.waitUpdates(ctx, sid, func(ns []note) bool { n, _, _ := commandsOf(ns); return slices.Contains(n, "later") })
	if n, _, _ := commandsOf(ups); !slices.Contains(n, "later") {
		t.Fatalf("advertised %v after the new file", n)
	}
}

func TestCommands_CompactCompactsTheConversation(t *testing.T) {
	ctx := testkit.Context(t)
	srv := fakeModel(t)
	srv.Handle(func(r *openaitest.Request) openaitest.Reply {
		if strings.Contains(systemOf(r.Chat), "replaced by a summary") {
			return openaitest.Text("THE SUMMARY")
		}
		return openaitest.Text("answer")
	})
	_, c := fakeDaemon(t, srv)
	sid := c.openSession(ctx, t.TempDir())
	c.prompt(ctx, sid, "first question")
	c.prompt(ctx, sid, "second question")
	c.endTurn(ctx, sid, "/compact")
	c.prompt(ctx, sid, "third question")
	reqs := srv.ChatRequests()
	last := reqs[len(reqs)-1]
	var texts []string
	for _, m := range last.Messages {
		if m.Role != "system" {
			texts = append(texts, m.Text())
		}
	}
	if len(texts) != 2 || !strings.Contains(texts[0], "THE SUMMARY") || texts[1] != "third question" {
		t.Fatalf("after /compact the model saw %q", texts)
	}
	if got := text(c.updates(sid)); !strings.Contains(got, "compacted") {
		t.Fatalf("the user was not told: %q", got)
	}
}

func TestCommands_AgentsListsTheAgentsAndTheirTools(t *testing.T) {
	ctx := testkit.Context(t)
	ws := agentWorkspace(t, "reviewer.md", "---\ndescription: Reviews diffs.\ntools: [read_file, grep]\n---\n")
	srv, c, sid := modelSession(ctx, t, ws, answer("model answered"))
	c.prompt(ctx, sid, "/agents")
	got := text(c.updates(sid))
	for _, want := range []string{"reviewer", "Reviews diffs.", "read_file, grep", "subagent", "spawn", "subagent_fork", "fork"} {
		if !strings.Contains(got, want) {
			t.Fatalf("/agents said %q, want %q in it", got, want)
		}
	}
	if len(srv.ChatRequests()) != 0 {
		t.Fatal("/agents asked the model")
	}
}

// /name of a command file that was refused is the user's command that
// could not be used: the prompt fails naming the file's mistake, and the
// model gets nothing; an unknown /word still goes to the model.
func TestCommands_ARejectedCommandFileIsAnErrorNotTextForTheModel(t *testing.T) {
	ctx := testkit.Context(t)
	ws := t.TempDir()
	bad := testkit.Write(t, filepath.Join(ws, ".dshd", "commands"), "fix.md", "---\ndescripton: Fix it\n---\nFix issue $1.\n")
	srv, c, sid := modelSession(ctx, t, ws, answer("ok"))
	_, err := c.callErr(ctx, "session/prompt", promptParams(sid, "/fix 12"))
	if err == nil || !strings.Contains(err.Error(), "/fix could not be used") || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "descripton") {
		t.Fatalf("/fix answered %v, want an error naming %s and its mistake", err, bad)
	}
	if n := len(srv.ChatRequests()); n != 0 {
		t.Fatalf("the model was called %d times for a command that could not be used", n)
	}
	c.endTurn(ctx, sid, "/other stays as typed")
	if got := srv.ChatRequests()[0].LastUserText(); got != "/other stays as typed" {
		t.Fatalf("the model got %q", got)
	}
}
