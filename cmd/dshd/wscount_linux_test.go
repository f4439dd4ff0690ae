// End-to-end tests of the bounds on how many files of a workspace (and
// of the user's config dir) dshd reads itself: past --max-command-files
// command files and --max-agent-files agent definitions, counted by name
// from .dshd on, the files are neither stat'ed nor read (a FIFO or a
// dangling link there is never mentioned), the hit is a warning naming
// the directory, its count and the setting, shown once; the user's own
// directory has a count of its own, which a repository cannot use up.

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshd/dshd/agent/llm/openai/openaitest"
	"github.com/dshd/dshd/internal/testkit"
)

// countedFiles fills a workspace and a user's config dir for a bound of
// 2 on one kind of file (dir is "commands" or "agents"): .dshd/DIR holds
// a, b, c (usable), then d, a FIFO, and e, a dangling link; .claude/DIR
// holds f; the user's DIR holds u1, u2 and u3. body is a usable file's
// text for its name.
type countedFiles struct {
	ws, config               string
	dshdDir, claudeDir, user string
	fifo, dangling           string
}

func newCountedFiles(t *testing.T, dir string, body func(name string) string) countedFiles {
	t.Helper()
	ws, config := t.TempDir(), t.TempDir()
	f := countedFiles{ws: ws, config: config,
		dshdDir:   filepath.Join(ws, ".dshd", dir),
		claudeDir: filepath.Join(ws, ".claude", dir),
		user:      filepath.Join(config, "dshd", dir),
	}
	for _, name := range []string{"a", "b", "c"} {
		testkit.Write(t, f.dshdDir, name+".md", body(name))
	}
	f.fifo = testkit.FIFO(t, ws, ".dshd/"+dir+"/d.md")
	f.dangling = filepath.Join(f.dshdDir, "e.md")
	if err := os.Symlink(filepath.Join(ws, "nowhere"), f.dangling); err != nil {
		t.Fatal(err)
	}
	testkit.Write(t, f.claudeDir, "f.md", body("f"))
	for _, name := range []string{"u1", "u2", "u3"} {
		testkit.Write(t, f.user, name+".md", body(name))
	}
	return f
}

// daemon starts dshd on the fake model h answers, with f's config dir as
// the user's, and args.
func (f countedFiles) daemon(t *testing.T, h func(*openaitest.Request) openaitest.Reply, args ...string) (*openaitest.Server, *proc, *wire) {
	t.Helper()
	srv := fakeModel(t)
	srv.Handle(h)
	p := start(t, opts{env: []string{"XDG_CONFIG_HOME=" + f.config}}, modelArgs(t, srv, args...)...)
	return srv, p, stdioWire(p)
}

// saysNothingOf fails the test when the session's updates or the log
// mention any of paths.
func saysNothingOf(t *testing.T, c *wire, p *proc, sid string, paths ...string) {
	t.Helper()
	said, log := text(c.updates(sid)), p.stderr.String()
	for _, path := range paths {
		if strings.Contains(said, path) || strings.Contains(log, path) {
			t.Fatalf("%s, past the bound, was mentioned:\n%s\nlog:\n%s", path, said, log)
		}
	}
}

// toldOnce fails the test unless the session was warned exactly once of
// each of warnings.
func toldOnce(t *testing.T, c *wire, sid string, warnings ...string) {
	t.Helper()
	said := text(c.updates(sid))
	for _, w := range warnings {
		if n := strings.Count(said, "⚠ "+w+"\n"); n != 1 {
			t.Fatalf("warned %d times, want once, of %q:\n%s%s", n, w, said, c.stderrTail())
		}
	}
}

// saidOfTheBound fails the test unless the session was told what it
// should be of f's files: with the bound lowered to 2 (setting), of each
// directory over it once (overWorkspace) and never of the FIFO and the
// link past it; at the default, of the FIFO and the link, which are read
// within it, and never of the setting.
func (f countedFiles) saidOfTheBound(ctx context.Context, t *testing.T, p *proc, c *wire, sid string, lowered bool, setting string, overWorkspace []string) {
	t.Helper()
	if lowered {
		toldOnce(t, c, sid, overWorkspace...)
		saysNothingOf(t, c, p, sid, f.fifo, f.dangling)
		return
	}
	warnedAbout(ctx, t, c, sid, f.fifo, "a named pipe (FIFO), not a regular file")
	warnedAbout(ctx, t, c, sid, f.dangling, "no such file or directory")
	if said := text(c.updates(sid)); strings.Contains(said, setting) {
		t.Fatalf("a count was said at the default: %q", said)
	}
}

const (
	commandsWhere = "a workspace's .dshd/commands and .claude/commands together (--max-command-files)"
	agentsWhere   = "a workspace's .dshd/agents and .claude/agents together (--max-agent-files)"
)

func TestWorkspaceFileCounts_CommandFilesPastTheBoundAreNotReadAndTheHitIsAWarning(t *testing.T) {
	f := newCountedFiles(t, "commands", func(name string) string { return "Say " + name + ": $ARGUMENTS\n" })
	loweredAndDefault(t, "--max-command-files", "2", func(t *testing.T, ctx context.Context, lowered bool, args []string) {
		srv, p, c := f.daemon(t, answer("ok"), args...)
		sid := c.openSession(ctx, f.ws)
		afterSetup(ctx, c, sid)
		overWorkspace := []string{
			f.dshdDir + ": 5 command files, the last 3 by name not read: at most 2 are read from " + commandsWhere,
			f.claudeDir + ": 1 command file, not read: at most 2 are read from " + commandsWhere,
			f.user + ": 3 command files, the last 1 by name not read: at most 2 are read from the user's directory (--max-command-files)",
		}
		names := []string{"a", "b", "c", "f", "u1", "u2", "u3"}
		usable := names
		f.saidOfTheBound(ctx, t, p, c, sid, lowered, "--max-command-files", overWorkspace)
		if lowered {
			// The workspace's first two by name, and the user's first two,
			// which the repository could not crowd out.
			usable = []string{"a", "b", "u1", "u2"}
		}
		for _, name := range names {
			c.endTurn(ctx, sid, "/"+name+" now")
		}
		reqs := srv.ChatRequests()
		for i, name := range names {
			want := "/" + name + " now" // no such command: the prompt as it is
			if slices.Contains(usable, name) {
				want = "Say " + name + ": now"
			}
			if got := reqs[i].LastUserText(); got != want {
				t.Fatalf("/%s sent %q, want %q", name, got, want)
			}
		}
		if lowered {
			// Seven turns later, each hit is still told once and logged
			// once.
			toldOnce(t, c, sid, overWorkspace...)
			if log := p.stderr.String(); strings.Count(log, "--max-command-files") != len(overWorkspace) {
				t.Fatalf("the hits are not logged once each:\n%s", log)
			}
		}
		endsOnSIGTERM(ctx, t, p)
	})
}

// The default bounds are 512 command files and 128 agent definitions:
// the file after them by name is not read, a FIFO there never mentioned,
// and the one before it works.
func TestWorkspaceFileCounts_AtTheDefaultTheFileAfterTheBoundIsNotRead(t *testing.T) {
	for _, tc := range []struct {
		dir, what, setting string
		max                int
		body               func(i int) string
		works              func(t *testing.T, ctx context.Context, srv *openaitest.Server, c *wire, sid string, last string)
	}{
		{"commands", "command files", "--max-command-files", 512, func(i int) string { return fmt.Sprintf("Say %d: $ARGUMENTS\n", i) },
			func(t *testing.T, ctx context.Context, srv *openaitest.Server, c *wire, sid string, last string) {
				c.endTurn(ctx, sid, "/"+last+" now")
				if got, want := srv.ChatRequests()[0].LastUserText(), "Say 511: now"; got != want {
					t.Fatalf("/%s sent %q, want %q", last, got, want)
				}
			}},
		{"agents", "agent definitions", "--max-agent-files", 128, func(i int) string { return fmt.Sprintf("---\ndescription: Agent %d.\n---\n", i) },
			func(t *testing.T, ctx context.Context, srv *openaitest.Server, c *wire, sid string, last string) {
				c.endTurn(ctx, sid, "hello")
				if names := toolNames(srv.ChatRequests()[0]); !slices.Contains(names, last) {
					t.Fatalf("%s is not offered: %v", last, names)
				}
			}},
	} {
		t.Run(tc.what, func(t *testing.T) {
			ctx := testkit.Context(t)
			ws := t.TempDir()
			dir := filepath.Join(ws, ".dshd", tc.dir)
			for i := range tc.max {
				testkit.Write(t, dir, fmt.Sprintf("c%03d.md", i), tc.body(i))
			}
			fifo := testkit.FIFO(t, ws, fmt.Sprintf(".dshd/%s/c%03d.md", tc.dir, tc.max))
			srv, p, c := modelDaemon(t, answer("ok"))
			sid := c.openSession(ctx, ws)
			afterSetup(ctx, c, sid)
			toldOnce(t, c, sid, fmt.Sprintf("%s: %d %s, the last 1 by name not read: at most %d are read from a workspace's .dshd/%s and .claude/%s together (%s)",
				dir, tc.max+1, tc.what, tc.max, tc.dir, tc.dir, tc.setting))
			saysNothingOf(t, c, p, sid, fifo)
			tc.works(t, ctx, srv, c, sid, fmt.Sprintf("c%03d", tc.max-1))
			endsOnSIGTERM(ctx, t, p)
		})
	}
}

func TestWorkspaceFileCounts_AgentDefinitionsPastTheBoundAreNotReadAndTheHitIsAWarning(t *testing.T) {
	f := newCountedFiles(t, "agents", func(name string) string { return "---\ndescription: Agent " + name + ".\n---\n" })
	loweredAndDefault(t, "--max-agent-files", "2", func(t *testing.T, ctx context.Context, lowered bool, args []string) {
		srv, p, c := f.daemon(t, answer("ok"), args...)
		userHit := f.user + ": 3 agent definitions, the last 1 by name not read: at most 2 are read from the user's directory (--max-agent-files)"
		if lowered {
			// The user's are checked at start, and their mistakes logged
			// there, not shown in a session.
			if _, err := p.stderr.waitFor(ctx, "agent definition rejected", userHit); err != nil {
				t.Fatalf("%v\n%s", err, p.stderr.String())
			}
		}
		sid := c.openSession(ctx, f.ws)
		afterSetup(ctx, c, sid)
		overWorkspace := []string{
			f.dshdDir + ": 5 agent definitions, the last 3 by name not read: at most 2 are read from " + agentsWhere,
			f.claudeDir + ": 1 agent definition, not read: at most 2 are read from " + agentsWhere,
		}
		offered := []string{"a", "b", "c", "f", "u1", "u2", "u3"}
		f.saidOfTheBound(ctx, t, p, c, sid, lowered, "--max-agent-files", overWorkspace)
		if lowered {
			offered = []string{"a", "b", "u1", "u2"}
		}
		c.endTurn(ctx, sid, "hello")
		c.endTurn(ctx, sid, "again")
		for i, req := range srv.ChatRequests() {
			names := toolNames(req)
			for _, name := range []string{"a", "b", "c", "f", "u1", "u2", "u3"} {
				if slices.Contains(names, name) != slices.Contains(offered, name) {
					t.Fatalf("request %d offered %v, want of the definitions only %v", i, names, offered)
				}
			}
		}
		if lowered {
			toldOnce(t, c, sid, overWorkspace...)
			if log := p.stderr.String(); strings.Count(log, userHit) != 1 || strings.Count(log, "--max-agent-files") != 1+len(overWorkspace) {
				t.Fatalf("the hits are not logged once each:\n%s", log)
			}
			if strings.Contains(text(c.updates(sid)), f.user) {
				t.Fatal("the user's hit was shown in a session")
			}
		}
		endsOnSIGTERM(ctx, t, p)
	})
}

func TestABadWorkspaceFileCountStopsDshdAtStart(t *testing.T) {
	runServeMistakes(t, []mistake{
		{name: "a zero command file count", args: []string{"--max-command-files", "0"}, want: []string{"--max-command-files", `"0"`, "want 1 to 1048576"}},
		{name: "a command file count that is no number", env: []string{"DSHD_MAX_COMMAND_FILES=many"}, want: []string{"DSHD_MAX_COMMAND_FILES", `"many"`, "want a whole number"}},
		{name: "a negative agent file count in the file", file: `{"maxAgentFiles": -1}`, want: []string{"FILE:1:", "maxAgentFiles", "want 1 to 1048576"}},
		{name: "an agent file count over the range", args: []string{"--max-agent-files", "1048577"}, want: []string{"--max-agent-files", `"1048577"`, "want 1 to 1048576"}},
	})
}
