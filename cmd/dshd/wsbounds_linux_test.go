// End-to-end tests of the bounds on the files a workspace holds that dshd
// reads itself, each a setting: an AGENTS.md over --max-instructions-bytes
// is cut and the user told, a command file over --max-command-file-bytes,
// a definition or its schema file over --max-agent-file-bytes are refused
// with a warning naming the setting, a .gitignore over
// --max-ignore-file-bytes is not used and glob and grep say so; the
// defaults take the same files. An AGENTS.md that cannot be used is told
// to the user, as a notice or as the "⚠" message.

package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
	"github.com/dshd/dshd/internal/testkit"
)

// noticeCaps are the client capabilities of an editor that shows notices.
var noticeCaps = map[string]any{"session": map[string]any{"notices": map[string]any{}}}

// noticeUpdate is a notice the daemon sent.
type noticeUpdate struct {
	Severity    string `json:"severity"`
	Title       string `json:"title"`
	Description string `json:"description"`
}

// notices are the notice updates among ns.
func notices(ns []note) []noticeUpdate {
	var out []noticeUpdate
	for _, n := range ns {
		if n.Kind == "notice" {
			var u noticeUpdate
			_ = json.Unmarshal(n.Update, &u)
			out = append(out, u)
		}
	}
	return out
}

// afterSetup waits for the usage_update that ends what follows a
// session's setup, its warnings included, and returns the session's
// updates so far.
func afterSetup(ctx context.Context, c *wire, sid string) []note {
	c.t.Helper()
	return c.waitUpdates(ctx, sid, func(ns []note) bool { return count(ns, "usage_update") > 0 })
}

// loweredAndDefault runs f with flag set to value (lowered), then with
// the default: args are the daemon's arguments.
func loweredAndDefault(t *testing.T, flag, value string, f func(t *testing.T, ctx context.Context, lowered bool, args []string)) {
	for _, lowered := range []bool{true, false} {
		name, args := "the default", []string(nil)
		if lowered {
			name, args = flag+" "+value, []string{flag, value}
		}
		t.Run(name, func(t *testing.T) { f(t, testkit.Context(t), lowered, args) })
	}
}

// padded is head followed by '#' up to size bytes.
func padded(head string, size int) string { return head + strings.Repeat("#", size-len(head)) }

func TestWorkspaceFileBounds_AnAGENTSmdOverItsBoundIsCutAndToldOnce(t *testing.T) {
	ws := t.TempDir()
	path := testkit.Write(t, ws, "AGENTS.md", strings.Repeat("r", 1024)+"TAIL")
	want := noticeUpdate{Severity: "warning", Title: path + " is cut",
		Description: "it is 1028 bytes, over --max-instructions-bytes (1024); the model is given its first 1024 bytes and told the rest is in the file"}
	cutModel := func(t *testing.T, srv *openaitest.Server) {
		t.Helper()
		sys := systemOf(srv.ChatRequests()[0])
		if !strings.Contains(sys, strings.Repeat("r", 1024)) || strings.Contains(sys, "TAIL") || !strings.Contains(sys, "[AGENTS.md was cut after 1024 bytes; read the file for the rest.]") {
			t.Fatalf("the system prompt:\n%s", sys)
		}
	}

	t.Run("a client that shows notices gets one for each session", func(t *testing.T) {
		ctx := testkit.Context(t)
		srv, p, c := modelDaemon(t, answer("ok"), "--max-instructions-bytes", "1024")
		c.initialize(ctx, noticeCaps)
		sid := c.newSession(ctx, ws)
		if got := notices(afterSetup(ctx, c, sid)); len(got) != 1 || got[0] != want {
			t.Fatalf("the notices %+v, want %+v%s", got, want, c.stderrTail())
		}
		c.endTurn(ctx, sid, "hello")
		c.endTurn(ctx, sid, "again")
		cutModel(t, srv)
		if got := notices(c.updates(sid)); len(got) != 1 {
			t.Fatalf("the same file was told again: %+v", got)
		}
		if log := p.stderr.String(); strings.Count(log, "project instructions cut") != 1 || !strings.Contains(log, "setting=--max-instructions-bytes") {
			t.Fatalf("the cut is not logged once naming the setting:\n%s", log)
		}
		other := c.newSession(ctx, ws)
		if got := notices(afterSetup(ctx, c, other)); len(got) != 1 || got[0] != want {
			t.Fatalf("a new session's notices %+v", got)
		}
		endsOnSIGTERM(ctx, t, p)
	})

	t.Run("a client without notices gets a message the model never sees", func(t *testing.T) {
		ctx := testkit.Context(t)
		srv, p, c := modelDaemon(t, answer("ok"), "--max-instructions-bytes", "1024")
		sid := c.openSession(ctx, ws)
		line := "⚠ " + want.Title + ": " + want.Description + "\n"
		if got := text(afterSetup(ctx, c, sid)); !strings.Contains(got, line) {
			t.Fatalf("the messages %q, want %q%s", got, line, c.stderrTail())
		}
		c.endTurn(ctx, sid, "hello")
		c.endTurn(ctx, sid, "again")
		cutModel(t, srv)
		if got := text(c.updates(sid)); strings.Count(got, want.Title) != 1 {
			t.Fatalf("the messages %q", got)
		}
		if raw, _ := json.Marshal(srv.ChatRequests()[1].Messages); strings.Contains(string(raw), "⚠") {
			t.Fatalf("the warning reached the model: %s", raw)
		}
		endsOnSIGTERM(ctx, t, p)
	})

	t.Run("the default bound takes the whole file", func(t *testing.T) {
		ctx := testkit.Context(t)
		srv, p, c := modelDaemon(t, answer("ok"))
		c.initialize(ctx, noticeCaps)
		sid := c.newSession(ctx, ws)
		if got := notices(afterSetup(ctx, c, sid)); slices.ContainsFunc(got, func(n noticeUpdate) bool { return strings.Contains(n.Title, "AGENTS.md") }) {
			t.Fatalf("the notices %+v", got)
		}
		c.endTurn(ctx, sid, "hello")
		if sys := systemOf(srv.ChatRequests()[0]); !strings.Contains(sys, strings.Repeat("r", 1024)+"TAIL") || strings.Contains(sys, "was cut") {
			t.Fatalf("the system prompt:\n%s", sys)
		}
		endsOnSIGTERM(ctx, t, p)
	})
}

// An AGENTS.md that cannot be used was only logged; the user, who does
// not read dshd's log, is told once per session, as a notice or a
// message, and the session works without it.
func TestWorkspaceFileBounds_AnAGENTSmdThatCannotBeUsedIsToldToTheUser(t *testing.T) {
	ws := t.TempDir()
	fifo := testkit.FIFO(t, ws, "AGENTS.md")
	want := noticeUpdate{Severity: "warning", Title: fifo + " is not used", Description: "a named pipe (FIFO), not a regular file"}
	for _, caps := range []map[string]any{noticeCaps, nil} {
		t.Run("notices "+map[bool]string{true: "shown", false: "not shown"}[caps != nil], func(t *testing.T) {
			ctx := testkit.Context(t)
			srv, p, c := modelDaemon(t, answer("ok"))
			c.initialize(ctx, caps)
			told := func(ns []note) int {
				if caps != nil {
					return len(slices.DeleteFunc(notices(ns), func(n noticeUpdate) bool { return n != want }))
				}
				return strings.Count(text(ns), "⚠ "+want.Title+": "+want.Description+"\n")
			}
			sid := c.newSession(ctx, ws)
			if ns := afterSetup(ctx, c, sid); told(ns) != 1 {
				t.Fatalf("told %d times, want once: notices %+v, messages %q%s", told(ns), notices(ns), text(ns), c.stderrTail())
			}
			c.endTurn(ctx, sid, "hello")
			c.endTurn(ctx, sid, "again")
			if n := told(c.updates(sid)); n != 1 {
				t.Fatalf("after two turns, told %d times", n)
			}
			if sys := systemOf(srv.ChatRequests()[0]); strings.Contains(sys, "Project instructions") {
				t.Fatalf("the system prompt:\n%s", sys)
			}
			other := c.newSession(ctx, ws)
			if n := told(afterSetup(ctx, c, other)); n != 1 {
				t.Fatalf("a new session was told %d times", n)
			}
			endsOnSIGTERM(ctx, t, p)
		})
	}
}

func TestWorkspaceFileBounds_ACommandFileOverItsBoundIsAWarningNamingTheSetting(t *testing.T) {
	ws := t.TempDir()
	testkit.Write(t, ws, ".dshd/commands/fits.md", padded("Say fits: $ARGUMENTS\n", 1024))
	over := testkit.Write(t, ws, ".dshd/commands/over.md", padded("Say over: $ARGUMENTS\n", 1025))
	loweredAndDefault(t, "--max-command-file-bytes", "1024", func(t *testing.T, ctx context.Context, lowered bool, args []string) {
		srv, p, c := modelDaemon(t, answer("ok"), args...)
		sid := c.openSession(ctx, ws)
		if lowered {
			warnedAbout(ctx, t, c, sid, over, "1025 bytes; a command file may have at most 1024 (--max-command-file-bytes)")
		} else if got := text(afterSetup(ctx, c, sid)); strings.Contains(got, over) {
			t.Fatalf("warned: %q", got)
		}
		c.endTurn(ctx, sid, "/fits now")
		if fits := srv.ChatRequests()[0].LastUserText(); !strings.HasPrefix(fits, "Say fits: now\n") {
			t.Fatalf("the command sent %q", fits)
		}
		if lowered {
			// A refused command file: the prompt fails naming it, and
			// nothing reaches the model.
			if _, err := c.callErr(ctx, "session/prompt", promptParams(sid, "/over now")); err == nil || !strings.Contains(err.Error(), "--max-command-file-bytes") {
				t.Fatalf("/over answered %v, want the file's mistake", err)
			}
			if n := len(srv.ChatRequests()); n != 1 {
				t.Fatalf("the model got %d requests", n)
			}
		} else {
			c.endTurn(ctx, sid, "/over now")
			if got := srv.ChatRequests()[1].LastUserText(); !strings.HasPrefix(got, "Say over: now\n") {
				t.Fatalf("the command sent %q", got)
			}
		}
		endsOnSIGTERM(ctx, t, p)
	})
}

func TestWorkspaceFileBounds_ADefinitionOrItsSchemaOverTheBoundIsAWarningNamingTheSetting(t *testing.T) {
	ws := t.TempDir()
	agentFile(t, ws, ".dshd/agents", "fits.md", padded("---\ndescription: Fits.\n---\n", 1024))
	over := agentFile(t, ws, ".dshd/agents", "over.md", padded("---\ndescription: Over.\n---\n", 1025))
	typed := agentFile(t, ws, ".dshd/agents", "typed.md", "---\ndescription: Typed.\noutputSchema: answer.json\n---\n")
	agentFile(t, ws, ".dshd/agents", "answer.json", `{"title": "`+strings.Repeat("a", 1025-len(`{"title": ""}`))+`"}`)
	loweredAndDefault(t, "--max-agent-file-bytes", "1024", func(t *testing.T, ctx context.Context, lowered bool, args []string) {
		srv, p, c := modelDaemon(t, answer("ok"), args...)
		sid := c.openSession(ctx, ws)
		offered := []string{"fits", "over", "typed"}
		if lowered {
			warnedAbout(ctx, t, c, sid, over, "1025 bytes; a definition may have at most 1024 (--max-agent-file-bytes)")
			warnedAbout(ctx, t, c, sid, typed+":3:1: outputSchema: ", "answer.json: 1025 bytes; an output schema file may have at most 1024 (--max-agent-file-bytes)")
			offered = []string{"fits"}
		} else if got := text(afterSetup(ctx, c, sid)); strings.Contains(got, "⚠ "+over) || strings.Contains(got, "⚠ "+typed) {
			t.Fatalf("warned: %q", got)
		}
		c.endTurn(ctx, sid, "hello")
		names := toolNames(srv.ChatRequests()[0])
		for _, name := range []string{"fits", "over", "typed"} {
			if slices.Contains(names, name) != slices.Contains(offered, name) {
				t.Fatalf("the model was offered %v, want of the definitions only %v", names, offered)
			}
		}
		endsOnSIGTERM(ctx, t, p)
	})
}

// A .gitignore over --max-ignore-file-bytes is not used: grep and glob
// find what it would have left out, and say that its rules were not
// applied, naming the setting.
func TestWorkspaceFileBounds_AGitignoreOverItsBoundIsNotUsedAndGlobAndGrepSaySo(t *testing.T) {
	ws := t.TempDir()
	testkit.Write(t, ws, ".gitignore", padded("*.log\n", 1025))
	testkit.Write(t, ws, "sub/x.log", "the needle\n")
	grep, _ := json.Marshal(map[string]string{"pattern": "needle"})
	glob, _ := json.Marshal(map[string]string{"pattern": "**/*.log"})
	const unused = ".gitignore was not used, so its rules were not applied: 1025 bytes; an ignore file may have at most 1024 (--max-ignore-file-bytes)"
	loweredAndDefault(t, "--max-ignore-file-bytes", "1024", func(t *testing.T, ctx context.Context, lowered bool, args []string) {
		srv, p, c := modelDaemon(t, func(r *openaitest.Request) openaitest.Reply {
			if hasToolResult(r.Chat) {
				return openaitest.Text("done")
			}
			return openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "g1", Name: "grep", Arguments: string(grep)}, {ID: "g2", Name: "glob", Arguments: string(glob)}}}
		}, args...)
		sid := c.openSession(ctx, ws)
		c.endTurn(ctx, sid, "find the needle")
		results := toolResults(srv)
		if len(results) != 2 {
			t.Fatalf("the tool results %q", results)
		}
		for i, found := range []string{"sub/x.log:1:the needle", "sub/x.log\n"} {
			if got := results[i]; lowered != strings.Contains(got, found) || lowered != strings.Contains(got, unused) {
				t.Fatalf("with the bound lowered %v, the result %q", lowered, got)
			}
		}
		endsOnSIGTERM(ctx, t, p)
	})
}

func TestABadWorkspaceFileBoundStopsDshdAtStart(t *testing.T) {
	runServeMistakes(t, []mistake{
		{name: "an instructions bound under 1 KiB", args: []string{"--max-instructions-bytes", "1000"}, want: []string{"--max-instructions-bytes", `"1000"`, "want 1024 to 1073741824"}},
		{name: "an instructions bound from the environment that is no number", env: []string{"DSHD_MAX_INSTRUCTIONS_BYTES=64KiB"}, want: []string{"DSHD_MAX_INSTRUCTIONS_BYTES", `"64KiB"`, "want a whole number"}},
		{name: "a command file bound that is no number", args: []string{"--max-command-file-bytes", "256k"}, want: []string{"--max-command-file-bytes", `"256k"`, "want a whole number"}},
		{name: "a negative command file bound in the file", file: `{"maxCommandFileBytes": -1}`, want: []string{"FILE:1:", "maxCommandFileBytes", "want 1024 to 1073741824"}},
		{name: "an agent file bound over 1 GiB from the environment", env: []string{"DSHD_MAX_AGENT_FILE_BYTES=2147483648"}, want: []string{"DSHD_MAX_AGENT_FILE_BYTES", `"2147483648"`, "want 1024 to 1073741824"}},
		{name: "a zero agent file bound", args: []string{"--max-agent-file-bytes", "0"}, want: []string{"--max-agent-file-bytes", `"0"`, "want 1024 to 1073741824"}},
		{name: "a zero ignore file bound in the file", file: `{"maxIgnoreFileBytes": 0}`, want: []string{"FILE:1:", "maxIgnoreFileBytes", "want 1024 to 1073741824"}},
		{name: "an ignore file bound that is no number", args: []string{"--max-ignore-file-bytes", "1MiB"}, want: []string{"--max-ignore-file-bytes", `"1MiB"`, "want a whole number"}},
	})
}
