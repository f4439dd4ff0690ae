//go:build unix

package acpprovider_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/subagents"
	st "github.com/dshd/dshd/subagents/subagenttest"
	"github.com/dshd/dshd/tools"
)

// ask runs one prompt on a fake agent and returns its answer.
func ask(t *testing.T, p subagents.Provider, parent *st.Parent, prompt string, opts map[string]string) subagents.Result {
	t.Helper()
	run, err := p.Start(t.Context(), subagents.StartRequest{Prompt: prompt, Parent: parent.Scope, Options: opts})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer run.Dispose()
	return wait(t, run)
}

func TestServe_TheParentRefusesWhatItDoesNotOffer(t *testing.T) {
	p := newProvider(t, nil)
	parent := newParent(t, parentOpts{})
	missing := filepath.Join(parent.Scope.Cwd, "missing.txt")
	res := ask(t, p, parent, "probe", fakeBinding(modeAgent, "PROBE_MISSING="+missing))
	want := map[string]string{
		"read-outside":    "-32602", // outside the workspace
		"read-missing":    "-32002", // resource not found
		"terminal":        "-32601", // the parent has no runner: not offered
		"terminal-output": "-32601",
		"elicitation":     "-32601", // never offered
		"unknown":         "-32601",
		"extension":       "-32601",
		"unknown-session": "-32002",
	}
	got := map[string]string{}
	for _, f := range strings.Fields(res.Output) {
		k, v, _ := strings.Cut(f, "=")
		got[k] = v
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %s, want %s (answer %q)", k, got[k], v, res.Output)
		}
	}
}

func TestServe_OnlyWhatTheParentHasIsAdvertised(t *testing.T) {
	p := newProvider(t, nil)
	cases := []struct {
		name   string
		parent parentOpts
		want   acp.ClientCapabilities
	}{
		{"files but no runner and no editor view", parentOpts{}, acp.ClientCapabilities{FS: acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}}},
		{"a runner adds terminals", parentOpts{runner: true}, acp.ClientCapabilities{FS: acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}, Terminal: true}},
		{"an editor that sees children adds subagents", parentOpts{expose: &st.Exposure{}}, acp.ClientCapabilities{FS: acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}, Subagents: &acp.SubagentCapabilities{}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			parent := newParent(t, tc.parent)
			res := ask(t, p, parent, "caps", fakeBinding(modeAgent))
			var got acp.ClientCapabilities
			if err := json.Unmarshal([]byte(res.Output), &got); err != nil {
				t.Fatalf("answer %q: %v", res.Output, err)
			}
			gotJSON, _ := json.Marshal(got)
			wantJSON, _ := json.Marshal(tc.want)
			if string(gotJSON) != string(wantJSON) {
				t.Fatalf("advertised %s, want %s", gotJSON, wantJSON)
			}
		})
	}
}

func TestServe_FilesGoThroughTheParentsWorkspaceAndGate(t *testing.T) {
	p := newProvider(t, nil)
	t.Run("a read returns the content", func(t *testing.T) {
		parent := newParent(t, parentOpts{})
		path := filepath.Join(parent.Scope.Cwd, "a.txt")
		os.WriteFile(path, []byte("hello\n"), 0o644)
		if res := ask(t, p, parent, "read "+path, fakeBinding(modeAgent)); res.Output != "content: hello\n" {
			t.Fatalf("answer %q", res.Output)
		}
	})
	t.Run("an allowed write is written after one question", func(t *testing.T) {
		gate := &recGate{}
		parent := newParent(t, parentOpts{gate: gate})
		path := filepath.Join(parent.Scope.Cwd, "new.txt")
		if res := ask(t, p, parent, "write "+path+" fresh", fakeBinding(modeAgent)); res.Output != "ok" {
			t.Fatalf("answer %q", res.Output)
		}
		if b, _ := os.ReadFile(path); string(b) != "fresh" {
			t.Fatalf("file holds %q", b)
		}
		reqs := gate.requests()
		if len(reqs) != 1 || reqs[0].Effect != tools.EffectEdit || reqs[0].Title != "Create new.txt" || reqs[0].Requester == "" {
			t.Fatalf("gate saw %+v", reqs)
		}
	})
	t.Run("a rejected write is not written", func(t *testing.T) {
		gate := &recGate{decide: func(tools.PermissionRequest) tools.Decision { return tools.Rejected }}
		parent := newParent(t, parentOpts{gate: gate})
		path := filepath.Join(parent.Scope.Cwd, "no.txt")
		if res := ask(t, p, parent, "write "+path+" nope", fakeBinding(modeAgent)); res.Output != "error -32603" {
			t.Fatalf("answer %q", res.Output)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Fatalf("the file exists: %v", err)
		}
	})
	t.Run("a write outside the workspace is refused without asking", func(t *testing.T) {
		gate := &recGate{}
		parent := newParent(t, parentOpts{gate: gate})
		outside := filepath.Join(t.TempDir(), "x.txt")
		if res := ask(t, p, parent, "write "+outside+" x", fakeBinding(modeAgent)); res.Output != "error -32602" {
			t.Fatalf("answer %q", res.Output)
		}
		if len(gate.requests()) != 0 {
			t.Fatal("the gate was asked")
		}
	})
	t.Run("a write the child asked permission for is not asked again", func(t *testing.T) {
		gate := &recGate{}
		parent := newParent(t, parentOpts{gate: gate})
		path := filepath.Join(parent.Scope.Cwd, "w.txt")
		if res := ask(t, p, parent, "permwrite "+path+" granted", fakeBinding(modeAgent)); res.Output != "written" {
			t.Fatalf("answer %q", res.Output)
		}
		if reqs := gate.requests(); len(reqs) != 1 || reqs[0].ToolCallID != "tc_w" {
			t.Fatalf("gate saw %+v", reqs)
		}
	})
	t.Run("a write to .git is put to the gate as a control edit even after the child's question", func(t *testing.T) {
		gate := &recGate{}
		parent := newParent(t, parentOpts{gate: gate})
		if err := os.Mkdir(filepath.Join(parent.Scope.Cwd, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(parent.Scope.Cwd, ".git", "config")
		if res := ask(t, p, parent, "permwrite "+path+" payload", fakeBinding(modeAgent)); res.Output != "written" {
			t.Fatalf("answer %q", res.Output)
		}
		if reqs := gate.requests(); len(reqs) != 2 || reqs[1].Effect != tools.EffectControl {
			t.Fatalf("gate saw %+v", reqs)
		}
	})
}

func TestServe_PermissionQuestionsReachTheParentsGate(t *testing.T) {
	p := newProvider(t, nil)
	cases := []struct {
		name     string
		decision tools.Decision
		deny     bool
		want     string
		asked    bool
	}{
		{"allowed selects the allow option", tools.Allowed, false, "selected yes", true},
		{"rejected selects the reject option", tools.Rejected, false, "selected no", true},
		{"cancelled answers cancelled", tools.Cancelled, false, "cancelled", true},
		{"a binding pinned to deny rejects without asking", tools.Allowed, true, "selected no", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			gate := &recGate{decide: func(tools.PermissionRequest) tools.Decision { return tc.decision }}
			parent := newParent(t, parentOpts{gate: gate})
			run, err := p.Start(t.Context(), subagents.StartRequest{Prompt: "permission", Parent: parent.Scope, Options: fakeBinding(modeAgent), DenyPermissions: tc.deny, ToolCallID: "call_7"})
			if err != nil {
				t.Fatal(err)
			}
			defer run.Dispose()
			if res := wait(t, run); res.Output != tc.want {
				t.Fatalf("answer %q, want %q", res.Output, tc.want)
			}
			reqs := gate.requests()
			if !tc.asked {
				if len(reqs) != 0 {
					t.Fatalf("the gate was asked: %+v", reqs)
				}
				return
			}
			if len(reqs) != 1 {
				t.Fatalf("gate saw %+v", reqs)
			}
			r := reqs[0]
			if r.Requester != "call_7" || r.ToolCallID != "tc_perm" || r.Title != "Delete everything" || r.Effect != tools.EffectEdit || r.Kind != tools.KindDelete {
				t.Fatalf("gate saw %+v", r)
			}
		})
	}
}

func TestServe_TerminalsRunOnTheParentsRunner(t *testing.T) {
	p := newProvider(t, nil)
	gate := &recGate{}
	parent := newParent(t, parentOpts{gate: gate, runner: true})
	res := ask(t, p, parent, "term echo hello world", fakeBinding(modeAgent))
	if res.Output != `exit=0 output="hello world\n"` {
		t.Fatalf("answer %q", res.Output)
	}
	if reqs := gate.requests(); len(reqs) != 1 || reqs[0].Effect != tools.EffectExecute || reqs[0].Title != "Run echo hello world" {
		t.Fatalf("gate saw %+v", reqs)
	}
	if res := ask(t, p, parent, "term false", fakeBinding(modeAgent)); res.Output != `exit=1 output=""` {
		t.Fatalf("answer %q", res.Output)
	}
	if res := ask(t, p, parent, "term /nonexistent/program", fakeBinding(modeAgent)); !strings.HasPrefix(res.Output, "exit=127") {
		t.Fatalf("answer %q", res.Output)
	}
	checkNoProcesses(t)
}

func TestSession_OpensWhereTheBindingSaysWithWhatTheParentLends(t *testing.T) {
	p := newProvider(t, nil)
	type newSession struct {
		Cwd  string         `json:"cwd"`
		Dirs []string       `json:"dirs"`
		MCP  []string       `json:"mcp"`
		Meta map[string]any `json:"meta"`
		WD   string         `json:"wd"`
	}
	setup := func(t *testing.T, exp subagents.Exposure) *st.Parent {
		parent := newParent(t, parentOpts{expose: exp})
		parent.Scope.AdditionalDirectories = []string{t.TempDir()}
		parent.Scope.MCPServers = json.RawMessage(`[{"name":"local","command":"/bin/true","args":[],"env":[]},` +
			`{"type":"http","name":"web","url":"http://127.0.0.1:1/mcp","headers":[]},` +
			`{"type":"sse","name":"old","url":"http://127.0.0.1:1/sse","headers":[]}]`)
		return parent
	}
	got := func(t *testing.T, parent *st.Parent, opts map[string]string) newSession {
		res := ask(t, p, parent, "session", opts)
		var ns newSession
		if err := json.Unmarshal([]byte(res.Output), &ns); err != nil {
			t.Fatalf("answer %q: %v", res.Output, err)
		}
		return ns
	}
	t.Run("by default the parent session's cwd and roots, depth in _meta, no MCP servers", func(t *testing.T) {
		parent := setup(t, nil)
		ns := got(t, parent, fakeBinding(modeAgent))
		if ns.Cwd != parent.Scope.Cwd || ns.WD != parent.Scope.Cwd || len(ns.Dirs) != 1 || ns.Dirs[0] != parent.Scope.AdditionalDirectories[0] || len(ns.MCP) != 0 {
			t.Fatalf("session/new got %+v", ns)
		}
		if ns.Meta["dshd.dev/depth"] != float64(1) || ns.Meta["dshd.dev/maxDepth"] != float64(subagents.DefaultMaxDepth) {
			t.Fatalf("_meta = %v", ns.Meta)
		}
	})
	t.Run("forwarded MCP servers, less the transports the agent does not take", func(t *testing.T) {
		parent := setup(t, nil)
		opts := fakeBinding(modeAgent)
		opts["forward-mcp"] = "true"
		if ns := got(t, parent, opts); strings.Join(ns.MCP, ",") != "local,web" {
			t.Fatalf("mcp servers = %q", ns.MCP)
		}
	})
	t.Run("an absolute cwd is the session's and the process's, and the editor is told", func(t *testing.T) {
		exp := &st.Exposure{}
		parent := setup(t, exp)
		dir, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		opts := fakeBinding(modeAgent)
		opts["cwd"] = dir
		ns := got(t, parent, opts)
		if ns.Cwd != dir || ns.WD != dir || len(ns.Dirs) != 0 {
			t.Fatalf("session/new got %+v", ns)
		}
		if a, _ := exp.Announcement("s_main/sa1"); a.Cwd != dir {
			t.Fatalf("announcement = %+v", a)
		}
	})
}
