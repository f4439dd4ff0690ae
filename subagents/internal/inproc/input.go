// This file builds the text of a child's turn: its provider's framing,
// the task, and the answer format when an output schema was asked for.

package inproc

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/dshd/dshd/subagents"
)

// childInput returns the text of the child's turn: frame (what the
// provider puts before the task), the task, and the answer format when an
// output schema was asked for.
func childInput(frame string, req subagents.StartRequest) string {
	var b strings.Builder
	b.WriteString(frame)
	b.WriteString(req.Prompt)
	if len(req.OutputSchema) > 0 {
		b.WriteString("\n\n# Answer format\n\nYour final message must be one JSON value, valid against the JSON Schema below, and nothing else: no prose and no code fence around it.\n\n")
		var compact bytes.Buffer
		if err := json.Compact(&compact, req.OutputSchema); err == nil {
			b.Write(compact.Bytes())
		} else {
			b.Write(req.OutputSchema)
		}
	}
	return b.String()
}
