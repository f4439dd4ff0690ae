package sandbox

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshd/dshd/tools/internal/tooltest"
)

func TestStartChild_AConfinedCommandTalksOnItsPipesAndWaitSaysHowItEnded(t *testing.T) {
	needLandlock(t)
	s := newSandbox(t, Config{})
	ws, outside := t.TempDir(), t.TempDir()
	// It echoes a line, tries a write outside its root, then exits 3 on
	// stdin EOF.
	c, err := s.Command(t.Context(), Spec{
		Argv:  []string{"/bin/sh", "-c", `read line; echo "got $line"; echo x > "$1/outside" 2>/dev/null || echo refused; echo x > inside && echo written; cat >/dev/null; exit 3`, "sh", outside},
		Dir:   ws,
		Env:   os.Environ(),
		Roots: []string{ws},
	})
	if err != nil {
		t.Fatal(err)
	}
	child, err := c.StartChild(nil)
	if err != nil {
		t.Fatal(err)
	}
	tmp := c.tmp
	if _, err := child.Stdin.WriteString("hello\n"); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(child.Stdout)
	var lines []string
	tooltest.Within(t, "the command's output", func() {
		for range 3 {
			l, _ := r.ReadString('\n')
			lines = append(lines, strings.TrimSpace(l))
		}
	})
	if got := strings.Join(lines, "|"); got != "got hello|refused|written" {
		t.Fatalf("output %q", got)
	}
	var st Status
	tooltest.Within(t, "the command's end", func() {
		child.StopGraces(s.cfg.Grace, s.cfg.Grace)
		st, err = c.Wait()
	})
	child.Stdout.Close()
	child.Stderr.Close()
	if err != nil || st.Code != 3 || st.Signal != "" {
		t.Fatalf("Wait = %+v, %v; want exit 3", st, err)
	}
	if exists(filepath.Join(outside, "outside")) || !exists(filepath.Join(ws, "inside")) {
		t.Fatal("the writes were not confined to the workspace")
	}
	if exists(tmp) {
		t.Fatalf("the command's temp dir %s is left", tmp)
	}
}
