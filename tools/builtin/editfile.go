// This file implements the edit_file tool.

package builtin

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/dshd/dshd/tools"
)

// EditFileName is the edit_file tool's name.
const EditFileName = "edit_file"

// EditFileParams are edit_file's arguments: either one edit inline, or a
// list of them.
type EditFileParams struct {
	Path       string `json:"path" jsonschema:"The file to edit: relative to the working directory, or absolute"`
	OldText    string `json:"old_text,omitempty" jsonschema:"For a single edit: the exact text to replace; it must match exactly once unless replace_all is set"`
	NewText    string `json:"new_text,omitempty" jsonschema:"For a single edit: the text to put in its place"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"For a single edit: replace every occurrence of old_text"`
	Edits      []Edit `json:"edits,omitempty" jsonschema:"Several edits, applied in order, all or none (instead of old_text/new_text)"`
}

// Edit is one replacement of edit_file.
type Edit struct {
	OldText    string `json:"old_text" jsonschema:"The exact text to replace; it must match exactly once unless replace_all is set"`
	NewText    string `json:"new_text" jsonschema:"The text to put in its place"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"Replace every occurrence of old_text"`
}

//go:embed editfile.md
var editFileDescription string

// NewEditFile returns the edit_file tool, titled "Edit <path>".
func NewEditFile() tools.Tool {
	return newFileTool(tools.Static{ToolName: EditFileName, ToolDescription: editFileDescription, ToolKind: tools.KindEdit,
		ToolTitle: argTitle("path", "Edit ", "Edit file")}, editFile, writes)
}

// editFile runs a call of edit_file.
func editFile(ctx context.Context, call *tools.Call, p EditFileParams) (*tools.Result, error) {
	edits := p.Edits
	single := p.OldText != "" || p.NewText != "" || p.ReplaceAll
	switch {
	case single && len(edits) > 0:
		return tools.Errorf("give either old_text/new_text or edits, not both"), nil
	case single:
		edits = []Edit{{OldText: p.OldText, NewText: p.NewText, ReplaceAll: p.ReplaceAll}}
	case len(edits) == 0:
		return tools.Errorf("nothing to do: give old_text and new_text, or edits"), nil
	}
	return rewrite(ctx, call, EditFileName, p.Path, "edit with edit_file", func(c *change) (string, *tools.Result) {
		if c.old == nil {
			return "", tools.Errorf("%s does not exist; use write_file to create it", c.shown)
		}
		text, firstLine, replaced, res := applyEdits(*c.old, edits, c.shown)
		if res != nil {
			return "", res
		}
		c.title, c.text, c.line = "Edit "+c.shown, text, firstLine
		if len(edits) > 1 {
			return fmt.Sprintf("Edited %s: %d edits, %d replacement(s)", c.shown, len(edits), replaced), nil
		}
		return fmt.Sprintf("Edited %s: %d replacement(s)", c.shown, replaced), nil
	})
}

// applyEdits applies edits to text in order. It returns the new text, the
// 1-based line of the first change and the number of replacements, or an
// error result naming the edit that failed.
func applyEdits(text string, edits []Edit, shown string) (string, int, int, *tools.Result) {
	firstLine, replaced := 0, 0
	which := func(i int) string {
		if len(edits) == 1 {
			return "edit"
		}
		return fmt.Sprintf("edit %d of %d", i+1, len(edits))
	}
	for i, e := range edits {
		if e.OldText == "" {
			return "", 0, 0, tools.Errorf("%s: old_text is empty; to create or replace a whole file use write_file", which(i))
		}
		if e.OldText == e.NewText {
			return "", 0, 0, tools.Errorf("%s: old_text and new_text are the same", which(i))
		}
		oldText, newText := e.OldText, e.NewText
		n := countMatches(text, oldText, e.ReplaceAll)
		if n == 0 && strings.Contains(text, "\r\n") && !strings.Contains(oldText, "\r") {
			// The model writes \n; the file has Windows line endings.
			crOld := strings.ReplaceAll(oldText, "\n", "\r\n")
			if m := countMatches(text, crOld, e.ReplaceAll); m > 0 {
				oldText, newText, n = crOld, strings.ReplaceAll(newText, "\n", "\r\n"), m
			}
		}
		switch {
		case n == 0:
			hint := ""
			if i > 0 {
				hint = " (after the edits before it)"
			}
			return "", 0, 0, tools.Errorf("%s: old_text was not found in %s%s; nothing was changed. Read the file again and copy the text exactly, whitespace included", which(i), shown, hint)
		case n > 1 && !e.ReplaceAll:
			return "", 0, 0, tools.Errorf("%s: old_text matches %d times in %s; nothing was changed. Include more surrounding lines to make it unique, or set replace_all", which(i), n, shown)
		}
		if firstLine == 0 {
			firstLine = strings.Count(text[:strings.Index(text, oldText)], "\n") + 1
		}
		if e.ReplaceAll {
			text = strings.ReplaceAll(text, oldText, newText)
		} else {
			text = strings.Replace(text, oldText, newText, 1)
		}
		replaced += n
	}
	return text, firstLine, replaced, nil
}

// countMatches counts the occurrences of sub in s. For a single
// replacement, an overlapping second occurrence counts too: "aa" is not
// unique in "aaa".
func countMatches(s, sub string, all bool) int {
	if all {
		return strings.Count(s, sub)
	}
	i := strings.Index(s, sub)
	if i < 0 {
		return 0
	}
	if strings.Contains(s[i+1:], sub) {
		return max(2, strings.Count(s, sub))
	}
	return 1
}
