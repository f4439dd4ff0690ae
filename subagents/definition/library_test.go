package definition_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
	"github.com/dshd/dshd/subagents/definition"
)

func TestLibrary_ADefinitionsToolFollowsItsFile(t *testing.T) {
	d := newDaemon(t)
	ws := t.TempDir()
	dir := filepath.Join(ws, ".dshd", "agents")
	path := testkit.Write(t, dir, "reviewer.md", "---\ndescription: Reviews diffs.\ntools: read_file\n---\nYou review.\n")
	lib := definition.New(definition.Options{Service: d.svc, Base: d.base})
	w, errs := lib.Open(ws)
	defer w.Close()
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	tl, ok := w.Tools().Get("reviewer")
	if !ok || !strings.HasPrefix(tl.Description(), "Reviews diffs.\n\n") {
		t.Fatalf("reviewer = %v, %v", tl, ok)
	}
	if _, ok := w.Tools().Get("read_file"); !ok {
		t.Fatal("the layer does not reach the daemon's tools")
	}
	if _, ok := d.base.Get("reviewer"); ok {
		t.Fatal("a workspace's definition leaked into the daemon's layer")
	}
	if changed, _ := w.Refresh(); changed {
		t.Fatal("nothing changed, but Refresh says it did")
	}

	// Edited: the description changes. (The size changes too, so the
	// edit is seen even on a file system with coarse timestamps.)
	testkit.Write(t, dir, "reviewer.md", "---\ndescription: Reviews diffs, carefully.\ntools: read_file\n---\nYou review.\n")
	if changed, errs := w.Refresh(); !changed || len(errs) != 0 {
		t.Fatalf("changed %v, errs %v", changed, errs)
	}
	if tl, _ := w.Tools().Get("reviewer"); !strings.HasPrefix(tl.Description(), "Reviews diffs, carefully.") {
		t.Fatalf("description after the edit = %q", tl.Description())
	}

	// Broken: reported with its file and key, and its tool is gone.
	testkit.Write(t, dir, "reviewer.md", "---\ndescription: Reviews diffs.\ntools: [read_file, reed_file]\n---\n")
	_, errs = w.Refresh()
	if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), path+":3:1: tools: ") {
		t.Fatalf("errs = %v", errs)
	}
	if _, ok := w.Tools().Get("reviewer"); ok {
		t.Fatal("a rejected definition kept its tool")
	}

	// New and deleted.
	testkit.Write(t, dir, "tester.md", "---\ndescription: Runs the tests.\n---\n")
	os.Remove(path)
	w.Refresh()
	if _, ok := w.Tools().Get("tester"); !ok {
		t.Fatal("a new definition has no tool")
	}
	if names := defNames(w); names != "tester" {
		t.Fatalf("definitions = %s", names)
	}
}

func TestLibrary_SessionsOfOneWorkspaceShareItsLayerAndTheLastCloseUnbinds(t *testing.T) {
	d := newDaemon(t)
	ws := t.TempDir()
	testkit.Write(t, filepath.Join(ws, ".dshd", "agents"), "helper.md", "---\ndescription: Helps.\n---\n")
	lib := definition.New(definition.Options{Service: d.svc, Base: d.base})
	a, _ := lib.Open(ws)
	b, _ := lib.Open(ws + "/")
	if a != b {
		t.Fatal("two sessions in one workspace got two layers")
	}
	layer := a.Tools()
	a.Close()
	if _, ok := layer.Get("helper"); !ok {
		t.Fatal("closing one session unbound the other's tools")
	}
	b.Close()
	if _, ok := layer.Get("helper"); ok {
		t.Fatal("the last close left the tool bound")
	}
}

func TestLibrary_TheUsersDefinitionsAreInEveryWorkspaceAndTheirMistakesAreLogged(t *testing.T) {
	d := newDaemon(t)
	home, ws1, ws2 := t.TempDir(), t.TempDir(), t.TempDir()
	udir := filepath.Join(home, "dshd", "agents")
	testkit.Write(t, udir, "planner.md", "---\ndescription: user planner\n---\n")
	testkit.Write(t, udir, "bad.md", "---\ndescription: d\nprovider: acp\ntools: grep\n---\n")
	testkit.Write(t, filepath.Join(ws2, ".dshd", "agents"), "planner.md", "---\ndescription: workspace planner\n---\n")
	var logs testkit.SyncBuffer
	lib := definition.New(definition.Options{Service: d.svc, Base: d.base, User: definition.UserSources(home),
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if errs := lib.CheckUser(); len(errs) != 1 || errs[0].Capability != "toolFilter" {
		t.Fatalf("CheckUser = %v", errs)
	}
	if !strings.Contains(logs.String(), "agent definition rejected") || !strings.Contains(logs.String(), filepath.Join(udir, "bad.md")+":4:1: tools: the acp provider") {
		t.Fatalf("logs = %s", logs.String())
	}
	w1, errs1 := lib.Open(ws1)
	defer w1.Close()
	w2, errs2 := lib.Open(ws2)
	defer w2.Close()
	if len(errs1)+len(errs2) != 0 {
		t.Fatalf("a user's mistake was reported to a session: %v %v", errs1, errs2)
	}
	p1, _ := w1.Tools().Get("planner")
	p2, _ := w2.Tools().Get("planner")
	if !strings.HasPrefix(p1.Description(), "user planner") || !strings.HasPrefix(p2.Description(), "workspace planner") {
		t.Fatalf("planner: %q / %q", p1.Description(), p2.Description())
	}
	if n := strings.Count(logs.String(), "agent definition rejected"); n != 1 {
		t.Fatalf("the user's mistake was logged %d times, want once", n)
	}
}

func defNames(w *definition.Workspace) string {
	var names []string
	for _, d := range w.Definitions() {
		names = append(names, d.Name())
	}
	return strings.Join(names, ",")
}

func TestLibrary_AWorkspaceWithoutDefinitionsIsReadOnceUntilOneAppears(t *testing.T) {
	d := newDaemon(t)
	ws := t.TempDir()
	lib := definition.New(definition.Options{Service: d.svc, Base: d.base})
	w, _ := lib.Open(ws)
	defer w.Close()
	if changed, _ := w.Refresh(); changed {
		t.Fatal("an empty workspace changed without a file")
	}
	testkit.Write(t, filepath.Join(ws, ".dshd", "agents"), "new.md", "---\ndescription: New.\n---\n")
	if changed, _ := w.Refresh(); !changed {
		t.Fatal("the first definition did not change the workspace")
	}
	if _, ok := w.Tools().Get("new"); !ok {
		t.Fatal("no tool for the new definition")
	}
}

func TestLibrary_SeesAChangeThatKeptTheSizeAndTheModTime(t *testing.T) {
	// A second write within the file system's clock tick leaves the
	// modification time as it was; Chtimes makes that happen for sure.
	d := newDaemon(t)
	ws := t.TempDir()
	dir := filepath.Join(ws, ".dshd", "agents")
	path := testkit.Write(t, dir, "reviewer.md", "---\ndescription: Reviews diffs A.\n---\n")
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	lib := definition.New(definition.Options{Service: d.svc, Base: d.base})
	w, errs := lib.Open(ws)
	defer w.Close()
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	testkit.Write(t, dir, "reviewer.md", "---\ndescription: Reviews diffs B.\n---\n")
	if err := os.Chtimes(path, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
	if changed, errs := w.Refresh(); !changed || len(errs) != 0 {
		t.Fatalf("a change within one mtime tick: changed %v, errs %v", changed, errs)
	}
	if tl, _ := w.Tools().Get("reviewer"); !strings.HasPrefix(tl.Description(), "Reviews diffs B.") {
		t.Fatalf("description after the edit = %q", tl.Description())
	}
	// Still too new to trust its stamp, the file is read again, and the
	// same text is no change.
	if changed, _ := w.Refresh(); changed {
		t.Fatal("a file read again with the same text changed the workspace")
	}
}
