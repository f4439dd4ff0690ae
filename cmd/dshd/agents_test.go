// End-to-end tests of agent definition files (issue 12 items 1-6): real
// files in a temp workspace, a real dshd on stdio, the fake OpenAI server.

package main

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
	"github.com/dshd/dshd/internal/testkit"
	"github.com/dshd/dshd/subagents/subagenttest"
)

// agentFile writes a definition into the workspace's dir (".dshd/agents"
// or ".claude/agents").
func agentFile(t testing.TB, ws, dir, name, content string) string {
	t.Helper()
	return testkit.Write(t, filepath.Join(ws, dir), name, content)
}

// agentWorkspace is a new workspace whose .dshd/agents holds one
// definition, name, with content.
func agentWorkspace(t testing.TB, name, content string) string {
	t.Helper()
	ws := t.TempDir()
	agentFile(t, ws, ".dshd/agents", name, content)
	return ws
}

// systemOf is a chat request's system message.
func systemOf(c *openaitest.ChatRequest) string {
	for _, m := range c.Messages {
		if m.Role == "system" {
			return m.Text()
		}
	}
	return ""
}

// toolResult is the content of the last tool message of c, or "".
func toolResult(c *openaitest.ChatRequest) string {
	out := ""
	for _, m := range c.Messages {
		if m.Role == "tool" {
			out = m.Text()
		}
	}
	return out
}

func toolNames(c *openaitest.ChatRequest) []string {
	var names []string
	for _, tl := range c.Tools {
		names = append(names, tl.Function.Name)
	}
	slices.Sort(names)
	return names
}

func toolDescription(c *openaitest.ChatRequest, name string) string {
	for _, tl := range c.Tools {
		if tl.Function.Name == name {
			return tl.Function.Description
		}
	}
	return ""
}

// delegating is a model whose parent calls tool with the task once and
// then ends with "parent done: <the tool's result>", and whose child
// (recognised by childMark in its system prompt) answers with child.
func delegating(tool, childMark string, child func(c *openaitest.ChatRequest) openaitest.Reply) func(*openaitest.Request) openaitest.Reply {
	return func(r *openaitest.Request) openaitest.Reply {
		c := r.Chat
		if strings.Contains(systemOf(c), childMark) {
			return child(c)
		}
		if res := toolResult(c); res != "" {
			return openaitest.Text("parent done: " + res)
		}
		return openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "call_1", Name: tool, Arguments: `{"description":"review","prompt":"the child task"}`}}}
	}
}

// requests splits the fake server's chat requests into the parent's and
// the child's.
func requests(srv *openaitest.Server, childMark string) (parent, child []*openaitest.ChatRequest) {
	for _, c := range srv.ChatRequests() {
		if strings.Contains(systemOf(c), childMark) {
			child = append(child, c)
		} else {
			parent = append(parent, c)
		}
	}
	return parent, child
}

func TestAgents_AWorkspaceDefinitionIsAToolWhoseChildIsOfferedExactlyTheFilteredTools(t *testing.T) {
	ctx := testkit.Context(t)
	ws := agentWorkspace(t, "reviewer.md", `---
description: Reviews the diff for bugs; never edits.
tools: [read_file, grep]
---
You are the reviewer, working in {{cwd}}.
`)
	srv, c, sid := modelSession(ctx, t, ws, delegating("reviewer", "You are the reviewer", func(*openaitest.ChatRequest) openaitest.Reply { return openaitest.Text("no bugs found") }))
	c.endTurn(ctx, sid, "review my change")
	parent, child := requests(srv, "You are the reviewer")
	if len(parent) == 0 || len(child) != 1 {
		t.Fatalf("%d parent and %d child requests", len(parent), len(child))
	}
	if d := toolDescription(parent[0], "reviewer"); !strings.HasPrefix(d, "Reviews the diff for bugs; never edits.\n\n") {
		t.Fatalf("the reviewer tool's description = %q (tools %v)", d, toolNames(parent[0]))
	}
	if got := toolNames(child[0]); !slices.Equal(got, []string{"grep", "read_file"}) {
		t.Fatalf("the child was offered %v, want exactly grep and read_file", got)
	}
	if s := systemOf(child[0]); !strings.Contains(s, "You are the reviewer, working in "+ws+".") {
		t.Fatalf("the child's system prompt was not the rendered body: %q", s)
	}
	if got := text(c.updates(sid)); !strings.Contains(got, "parent done: no bugs found") {
		t.Fatalf("the parent said %q", got)
	}
}

func TestAgents_AClaudeCodeAgentFileFromItsDocumentedFormatWorksUnchanged(t *testing.T) {
	ctx := testkit.Context(t)
	ws := t.TempDir()
	// As Claude Code's documentation writes a subagent.
	agentFile(t, ws, ".claude/agents", "code-reviewer.md", subagenttest.ClaudeCodeReviewer)
	srv, c, sid := modelSession(ctx, t, ws, delegating("code-reviewer", "You are a senior code reviewer", func(*openaitest.ChatRequest) openaitest.Reply { return openaitest.Text("looks good") }))
	c.endTurn(ctx, sid, "review")
	_, child := requests(srv, "You are a senior code reviewer")
	if len(child) != 1 {
		t.Fatalf("%d child requests; the parent said %q", len(child), text(c.updates(sid)))
	}
	if got := toolNames(child[0]); !slices.Equal(got, []string{"glob", "grep", "read_file", "run_command"}) {
		t.Fatalf("the child was offered %v", got)
	}
	if child[0].Model != "m" {
		t.Fatalf("model: inherit asked for %q, want the parent's m", child[0].Model)
	}
}

func TestAgents_ABadDefinitionIsReportedWithItsFileAndKeyAndItsToolIsAbsent(t *testing.T) {
	ctx := testkit.Context(t)
	ws := t.TempDir()
	bad := agentFile(t, ws, ".dshd/agents", "remote.md", "---\ndescription: Runs elsewhere.\nprovider: acp\ntools: [read_file]\n---\n")
	agentFile(t, ws, ".dshd/agents", "helper.md", "---\ndescription: Helps.\n---\n")
	srv, p, c := modelDaemon(t, answer("ok"))
	sid := c.openSession(ctx, ws)
	want := bad + ":4:1: tools: the acp provider cannot restrict its children's tools (it lacks the toolFilter capability)"
	ups := c.waitUpdates(ctx, sid, func(ns []note) bool { return strings.Contains(text(ns), want) })
	if !strings.Contains(text(ups), want) {
		t.Fatalf("the editor was not told: %s", dump(ups))
	}
	if _, err := p.stderr.waitFor(ctx, "agent definition rejected", "remote.md:4:1: tools:"); err != nil {
		t.Fatalf("no log line: %v\n%s", err, p.stderr.String())
	}
	c.endTurn(ctx, sid, "hi")
	names := toolNames(srv.ChatRequests()[0])
	if slices.Contains(names, "remote") || !slices.Contains(names, "helper") {
		t.Fatalf("tools offered: %v", names)
	}
}

func TestAgents_ADefinitionEditedWhileTheDaemonRunsChangesTheToolsDescription(t *testing.T) {
	ctx := testkit.Context(t)
	ws := agentWorkspace(t, "helper.md", "---\ndescription: First wording.\n---\n")
	srv, c, sid := modelSession(ctx, t, ws, answer("ok"))
	c.prompt(ctx, sid, "one")
	agentFile(t, ws, ".dshd/agents", "helper.md", "---\ndescription: Second, longer wording.\n---\n")
	agentFile(t, ws, ".dshd/agents", "added.md", "---\ndescription: Added later.\n---\n")
	// The running session follows the files from its next turn on; a new
	// session sees them at once.
	c.prompt(ctx, sid, "two")
	other := c.newSession(ctx, ws)
	c.prompt(ctx, other, "three")
	reqs := srv.ChatRequests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	if d := toolDescription(reqs[0], "helper"); !strings.HasPrefix(d, "First wording.") {
		t.Fatalf("before the edit: %q", d)
	}
	for i, r := range reqs[1:] {
		if d := toolDescription(r, "helper"); !strings.HasPrefix(d, "Second, longer wording.") || toolDescription(r, "added") == "" {
			t.Fatalf("request %d after the edit: helper %q, tools %v", i+2, d, toolNames(r))
		}
	}
}

// answers is a child model that gives the answers in turn, and records
// what it was told.
type answers struct {
	mu    sync.Mutex
	texts []string
	told  []string
}

func (a *answers) reply(c *openaitest.ChatRequest) openaitest.Reply {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.told = append(a.told, c.LastUserText())
	n := len(a.told) - 1
	return openaitest.Text(a.texts[min(n, len(a.texts)-1)])
}

const verdictSchema = `{"type":"object","required":["verdict"],"properties":{"verdict":{"type":"string","enum":["ok","bugs"]}}}`

// structuredCase runs one delegation to a definition with an output
// schema and returns the parent's tool result and what the child was told.
func structuredCase(t *testing.T, provider string, texts ...string) (result string, told []string) {
	ctx := testkit.Context(t)
	ws := t.TempDir()
	testkit.Write(t, ws, "verdict.json", verdictSchema)
	agentFile(t, ws, ".dshd/agents", "judge.md", "---\ndescription: Judges a change.\nprovider: "+provider+"\noutputSchema: ../../verdict.json\n---\nYou are the judge.\n")
	srv := fakeModel(t)
	child := &answers{texts: texts}
	srv.Handle(func(r *openaitest.Request) openaitest.Reply {
		c := r.Chat
		if isJudge(c) {
			return child.reply(c)
		}
		if res := toolResult(c); res != "" {
			return openaitest.Text("parent done")
		}
		return openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "call_1", Name: "judge", Arguments: `{"description":"judge","prompt":"judge it"}`}}}
	})
	_, c := fakeDaemon(t, srv, "--mode", "yolo")
	sid := c.openSession(ctx, ws)
	c.endTurn(ctx, sid, "go")
	for _, r := range srv.ChatRequests() {
		if res := toolResult(r); res != "" && !isJudge(r) {
			result = res
		}
	}
	child.mu.Lock()
	defer child.mu.Unlock()
	return result, slices.Clone(child.told)
}

// isJudge tells the judge's requests: an in-process child has the body as
// its system prompt, an acp child dshd gets it in its task.
func isJudge(c *openaitest.ChatRequest) bool {
	if strings.Contains(systemOf(c), "You are the judge") {
		return true
	}
	for _, m := range c.Messages {
		if m.Role == "user" && strings.Contains(m.Text(), "You are the judge") {
			return true
		}
	}
	return false
}

func TestAgents_StructuredResults(t *testing.T) {
	for _, provider := range []string{"spawn", "acp"} {
		t.Run(provider+": a valid answer is the tool's result", func(t *testing.T) {
			res, told := structuredCase(t, provider, `{"verdict":"ok"}`)
			if res != `{"verdict":"ok"}` || len(told) != 1 {
				t.Fatalf("result %q, child told %q", res, told)
			}
		})
		t.Run(provider+": an invalid answer is corrected once", func(t *testing.T) {
			res, told := structuredCase(t, provider, `{"verdict":"maybe"}`, `{"verdict":"bugs"}`)
			if res != `{"verdict":"bugs"}` || len(told) != 2 || !strings.Contains(told[1], "does not match the required JSON Schema") {
				t.Fatalf("result %q, child told %q", res, told)
			}
		})
		t.Run(provider+": an answer invalid twice fails the run", func(t *testing.T) {
			res, told := structuredCase(t, provider, "I think it is fine", `{"verdict":"maybe"}`)
			if !strings.Contains(res, "does not match the output schema, also after it was told why") || len(told) != 2 {
				t.Fatalf("result %q, child told %q", res, told)
			}
		})
	}
}

func TestAgents_BindingOptionsMeanTheSameAsTheFrontMatter(t *testing.T) {
	ctx := testkit.Context(t)
	srv, _, c := modelDaemon(t, delegating("ro", "Read-only helper", func(*openaitest.ChatRequest) openaitest.Reply { return openaitest.Text("read it") }), "--subagent", "ro=spawn,description=Reads only.,tools=read_file|list_dir,system-prompt=Read-only helper in {{cwd}}.")
	c.initialize(ctx, nil)
	ws := t.TempDir()
	sid := c.newSession(ctx, ws)
	c.prompt(ctx, sid, "go")
	parent, child := requests(srv, "Read-only helper")
	if len(child) != 1 || !slices.Equal(toolNames(child[0]), []string{"list_dir", "read_file"}) ||
		!strings.HasPrefix(toolDescription(parent[0], "ro"), "Reads only.\n\n") {
		t.Fatalf("child requests %d; parent tools %v", len(child), toolNames(parent[0]))
	}
}

func TestAgents_TheUsersDefinitionsAreCheckedAtStartAndServeEveryWorkspace(t *testing.T) {
	ctx := testkit.Context(t)
	config := t.TempDir()
	agentFile(t, config, "dshd/agents", "planner.md", "---\ndescription: Plans the work.\n---\n")
	bad := agentFile(t, config, "dshd/agents", "typo.md", "---\ndescription: d\ntool: [grep]\n---\n")
	srv := fakeModel(t)
	srv.Handle(answer("ok"))
	args := []string{"--model-url", srv.URL(), "--model", "m", "--api-key-env", "", "--state-dir", t.TempDir()}
	p := start(t, opts{env: []string{"XDG_CONFIG_HOME=" + config}}, args...)
	c := stdioWire(p)
	// Logged at start, before any session exists.
	if _, err := p.stderr.waitFor(ctx, "agent definition rejected", bad+":3:1: tool: unknown key"); err != nil {
		t.Fatalf("%v\n%s", err, p.stderr.String())
	}
	sid := c.openSession(ctx, t.TempDir())
	c.prompt(ctx, sid, "hi")
	if names := toolNames(srv.ChatRequests()[0]); !slices.Contains(names, "planner") || slices.Contains(names, "typo") {
		t.Fatalf("tools offered: %v", names)
	}
	if strings.Contains(text(c.updates(sid)), "typo.md") {
		t.Fatal("a mistake in the user's definitions was shown in a session")
	}
}
