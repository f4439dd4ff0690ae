package definition_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
	"github.com/dshd/dshd/subagents/definition"
)

// readmeExamples returns the README's Markdown example files, by the
// file name the sentence before each names.
func readmeExamples(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	text := string(raw)
	for {
		i := strings.Index(text, "\n```markdown\n")
		if i < 0 {
			return out
		}
		before := text[:i]
		body := text[i+len("\n```markdown\n"):]
		end := strings.Index(body, "\n```\n")
		if end < 0 {
			t.Fatal("an unclosed example")
		}
		// The file is named in backquotes in the paragraph just before.
		para := before[strings.LastIndex(before, "\n\n")+1:]
		if a := strings.LastIndex(para, ".md`"); a >= 0 {
			start := strings.LastIndex(para[:a], "`")
			out[filepath.Base(para[start+1:a+3])] = body[:end+1]
		}
		text = body[end:]
	}
}

func TestReadme_TheExampleDefinitionsWork(t *testing.T) {
	ex := readmeExamples(t)
	d := newDaemon(t)
	ws := t.TempDir()
	for _, name := range []string{"reviewer.md", "codex.md"} {
		if ex[name] == "" {
			t.Fatalf("the README has no example %s (found %d examples)", name, len(ex))
		}
		testkit.Write(t, filepath.Join(ws, ".dshd", "agents"), name, ex[name])
	}
	lib := definition.New(definition.Options{Service: d.svc, Base: d.base})
	w, errs := lib.Open(ws)
	defer w.Close()
	if len(errs) != 0 || len(w.Definitions()) != 2 {
		t.Fatalf("errs %v, %d definitions", errs, len(w.Definitions()))
	}
	rev := w.Definitions()[1]
	if rev.Name() != "reviewer" || rev.Binding.Tools == nil || !rev.Binding.DenyPermissions || len(rev.Binding.OutputSchema) == 0 {
		t.Fatalf("reviewer = %+v", rev.Binding)
	}
	if ex["fix-issue.md"] == "" {
		t.Fatal("the README has no command example fix-issue.md")
	}
}
