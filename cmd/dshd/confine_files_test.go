// End-to-end tests of the confinement of a workspace's command files,
// agent definitions and the schema files they name, through a real dshd
// on stdio and the fake OpenAI server: a link to a file outside the
// workspace is told to the user and logged, and nothing of the file
// reaches the model.

package main

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

func TestConfine_AWorkspacesCommandAndAgentFilesThatLeadOutsideAreToldAndNeverSent(t *testing.T) {
	ctx := testkit.Context(t)
	ws, outside := t.TempDir(), t.TempDir()
	const marker = "MARKER-FROM-OUTSIDE"
	secretCommand := testkit.Write(t, outside, "credentials.md", "Say "+marker+"-COMMAND.\n")
	secretAgent := testkit.Write(t, outside, "agent.md", "---\ndescription: "+marker+"-DESCRIPTION\n---\n"+marker+"-PROMPT\n")
	secretSchema := testkit.Write(t, outside, "schema.json", `{"title": "`+marker+`-SCHEMA"}`)
	commands, agents := filepath.Join(ws, ".dshd", "commands"), filepath.Join(ws, ".dshd", "agents")
	leak, leaky := testkit.Symlink(t, commands, "leak.md", secretCommand), testkit.Symlink(t, agents, "leaky.md", secretAgent)
	testkit.Symlink(t, agents, "answer.json", secretSchema)
	typed := testkit.Write(t, agents, "typed.md", "---\ndescription: Typed.\noutputSchema: answer.json\n---\n")
	// A file linked from inside the workspace still works.
	testkit.Write(t, ws, "docs/fine.md", "Say fine.\n")
	testkit.Symlink(t, commands, "fine.md", "../../docs/fine.md")

	srv, p, c := modelDaemon(t, answer("ok"))
	sid := c.openSession(ctx, ws)
	told := []string{
		leak + ": leads outside the workspace " + ws,
		leaky + ": leads outside the workspace " + ws,
		typed + ":3:1: outputSchema: ",
	}
	ups := c.waitUpdates(ctx, sid, func(ns []note) bool {
		_, _, advertised := commandsOf(ns)
		return advertised && !slices.ContainsFunc(told, func(w string) bool { return !strings.Contains(text(ns), w) })
	})
	for _, w := range told {
		if strings.Count(text(ups), w) != 1 {
			t.Fatalf("the user was not told %q once: %s", w, dump(ups))
		}
	}
	for _, line := range [][]string{{"command file rejected", "leak.md: leads outside the workspace"}, {"agent definition rejected", "leaky.md: leads outside the workspace"}} {
		if _, err := p.stderr.waitFor(ctx, line...); err != nil {
			t.Fatalf("no log line: %v\n%s", err, p.stderr.String())
		}
	}
	names, _, _ := commandsOf(ups)
	if slices.Contains(names, "leak") || !slices.Contains(names, "fine") {
		t.Fatalf("advertised %v", names)
	}

	// /leak is a command file that was refused: the prompt fails naming
	// it, and the model gets nothing.
	if _, err := c.callErr(ctx, "session/prompt", promptParams(sid, "/leak")); err == nil || !strings.Contains(err.Error(), "leak.md: leads outside the workspace") {
		t.Fatalf("/leak answered %v, want the file's mistake", err)
	}
	c.endTurn(ctx, sid, "/fine")
	reqs := srv.ChatRequests()
	if len(reqs) != 1 || reqs[0].LastUserText() != "Say fine." {
		t.Fatalf("the model got %d requests", len(reqs))
	}
	if tools := toolNames(reqs[0]); slices.Contains(tools, "leaky") || slices.Contains(tools, "typed") {
		t.Fatalf("the model was offered %v", tools)
	}
	for _, r := range srv.Requests() {
		if bytes.Contains(r.Body, []byte(marker)) {
			t.Fatalf("a file outside the workspace reached the model: %s", r.Body)
		}
	}
	// Told once: the second turn found the same mistakes.
	for _, w := range told {
		if got := strings.Count(text(c.updates(sid)), w); got != 1 {
			t.Fatalf("%q told %d times", w, got)
		}
	}
}
