package builtin

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/tasks"
	"github.com/dshd/dshd/tools/workspace"
)

var update = flag.Bool("update", false, "rewrite testdata/declarations.golden.json from the current tools")

// inputs are the arguments every tool is titled with, and its access
// told for: well formed, missing, of the wrong type, outside the
// workspace, with an unknown or a badly typed neighbour, long, on several
// lines, and no object at all.
var inputs = []string{
	`{}`,
	`null`,
	`[1]`,
	`{"path":"a.go"}`,
	`{"path":"../outside.go"}`,
	`{"path":"a.go","bogus":1}`,
	`{"path":"a.go","old_text":5}`,
	`{"path":7}`,
	`{"path":"  first line\r\nsecond line"}`,
	`{"path":"` + strings.Repeat("é", 50) + `"}`,
	`{"path":"f.go","offset":10,"limit":5}`,
	`{"path":"f.go","offset":10}`,
	`{"path":"f.go","limit":5}`,
	`{"pattern":"**/*.go"}`,
	`{"pattern":"func \\w+","path":"src","include":"*.go"}`,
	`{"pattern":"x","unknown":true}`,
	`{"command":"go test ./...\necho done","cwd":"sub"}`,
	`{"command":"   "}`,
	`{"entries":[]}`,
	`{"id":"t1","prompt":"go on"}`,
}

// declaration is what the model and the editor are told about a tool
// before any call runs, and what the agent orders its calls by.
type declaration struct {
	Name        string     `json:"name"`
	Kind        tools.Kind `json:"kind"`
	Parallel    bool       `json:"parallel"`
	Description string     `json:"description"`
	Schema      string     `json:"schema"`
	// Calls is, for each of the inputs, the call's title and access.
	Calls map[string]string `json:"calls,omitempty"`
}

// declare is t's declaration, with its calls when ws is not nil. A
// call's title is the one the agent shows (agent/toolcalls.go): the
// tool's own when it gives one, else its name; its access is
// tools.AccessOf in ws.
func declare(t tools.Tool, ws *workspace.Workspace) declaration {
	d := declaration{Name: t.Name(), Kind: t.Kind(), Description: t.Description(), Schema: string(t.InputSchema())}
	if p, ok := t.(tools.Parallel); ok {
		d.Parallel = p.ParallelSafe()
	}
	if ws == nil {
		return d
	}
	d.Calls = map[string]string{}
	for _, in := range inputs {
		title := t.Name()
		if tt, ok := t.(tools.Titler); ok && tt.Title(json.RawMessage(in)) != "" {
			title = tt.Title(json.RawMessage(in))
		}
		d.Calls[in] = fmt.Sprintf("%q, %s", title, accessText(ws, tools.AccessOf(t, ws, json.RawMessage(in))))
	}
	return d
}

// accessText is a in short, its paths relative to ws's root: "reads
// a.go", "writes all", "reads all; writes all", "nothing".
func accessText(ws *workspace.Workspace, a tools.Access) string {
	var parts []string
	add := func(verb string, all bool, paths []string) {
		if all {
			parts = append(parts, verb+" all")
		}
		for _, p := range paths {
			r, err := filepath.Rel(ws.Roots()[0], p)
			if err != nil {
				r = p
			}
			parts = append(parts, fmt.Sprintf("%s %q", verb, filepath.ToSlash(r)))
		}
	}
	add("reads", a.ReadsAll, a.Reads)
	add("writes", a.WritesAll, a.Writes)
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, "; ")
}

// TestDeclarations_TheModelSeesWhatItSawBefore pins, to the byte, every
// built-in and task tool's name, kind, parallelism, description, schema
// titles and access (the paths the agent orders their calls by): with
// the default options and with others (the limits stand in the
// descriptions), as the daemon registers them, and bound to a session's
// tasks, declared the same. testdata/declarations.golden.json
// is what they were; -update rewrites it.
func TestDeclarations_TheModelSeesWhatItSawBefore(t *testing.T) {
	ws, err := workspace.New(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	set := tasks.New(tasks.Options{})
	defer set.Close(tasks.StateInterrupted)
	var got []declaration
	add := func(group string, ws *workspace.Workspace, ts []tools.Tool) {
		for _, tl := range ts {
			d := declare(tl, ws)
			d.Name = group + "/" + d.Name
			got = append(got, d)
			if b, ok := tl.(tasks.Binder); ok {
				bound := declare(b.BindTasks(set), ws)
				bound.Name = d.Name
				if !reflect.DeepEqual(bound, d) {
					t.Errorf("%s bound to a session's tasks is declared\n%+v\nunbound\n%+v", d.Name, bound, d)
				}
			}
		}
	}
	add("default", ws, Builtins(nil))
	// Options change the descriptions only.
	add("options", nil, Builtins(&BuiltinOptions{
		ReadFile:   &ReadFileOptions{Limit: 50, MaxLineLength: 300},
		ListDir:    &ListDirOptions{MaxEntries: 7},
		Glob:       &GlobOptions{MaxResults: 8},
		Grep:       &GrepOptions{MaxMatches: 9},
		RunCommand: &RunCommandOptions{DefaultTimeout: 5 * time.Second, MaxTimeout: time.Minute, OutputLimit: 1234},
	}))
	add("tasks", ws, tasks.Tools())
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	const golden = "testdata/declarations.golden.json"
	if *update {
		if err := os.WriteFile(golden, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) == string(want) {
		return
	}
	var wantDecl []declaration
	if err := json.Unmarshal(want, &wantDecl); err != nil {
		t.Fatal(err)
	}
	if len(wantDecl) != len(got) {
		t.Fatalf("%d tools, %d in %s", len(got), len(wantDecl), golden)
	}
	for i, g := range got {
		gj, _ := json.MarshalIndent(g, "", "  ")
		wj, _ := json.MarshalIndent(wantDecl[i], "", "  ")
		if string(gj) != string(wj) {
			t.Errorf("%s is declared\n%s\nwant\n%s", g.Name, gj, wj)
		}
	}
}
