package main

import (
	"strings"
	"testing"

	"github.com/dshd/dshd/acp"
)

// A failed tool's reason is shown on its one line whole, its lines
// joined: a child agent that could not start says "its stderr ends
// with:" and gives the stderr on the next line, which the first line
// alone left out.
func TestFailureTextJoinsTheReasonsLines(t *testing.T) {
	content := func(text string) []acp.ToolCallContent {
		return []acp.ToolCallContent{&acp.ToolContent{Content: &acp.TextContent{Text: text}}}
	}
	for _, tc := range []struct{ in, want string }{
		{"The agent could not be started: its stderr ends with:\nfatal: codex-acp needs OPENAI_API_KEY\n",
			"The agent could not be started: its stderr ends with: fatal: codex-acp needs OPENAI_API_KEY"},
		{"  old_text was not found in main.go  ", "old_text was not found in main.go"},
		{strings.Repeat("é", reasonWidth+5), strings.Repeat("é", reasonWidth-1) + "…"},
		{"\n\n", ""},
	} {
		if got := failureText(content(tc.in)); got != tc.want {
			t.Errorf("failureText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
