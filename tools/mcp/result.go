// This file maps an MCP tools/call result onto a tools.Result: text for the
// model, short descriptions of what text cannot carry, structured content
// as JSON.

package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dshd/dshd/internal/utf8cut"
	"github.com/dshd/dshd/tools"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// mapResult turns res into what the model and the editor see. Text blocks
// are kept as they are; images and audio become a line naming their type
// and size; a resource link becomes a line with its URI; an embedded text
// resource keeps its text, a binary one becomes a line. structuredContent
// is added as JSON when no block carried text (servers are asked to send
// it as text too) and is the editor's rawOutput. isError makes the result
// an error result. The text is capped at maxOutput bytes, and so is the
// structuredContent passed on as rawOutput; cut reports either.
func mapResult(server string, res *sdk.CallToolResult, maxOutput int, setting string) (_ *tools.Result, cut bool) {
	if res == nil {
		return tools.Errorf("MCP server %q returned no result", server), false
	}
	var parts []string
	hasText := false
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
			hasText = true
		case *sdk.ImageContent:
			parts = append(parts, fmt.Sprintf("[image: %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data)))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio: %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data)))
		case *sdk.ResourceLink:
			parts = append(parts, resourceLink(c))
		case *sdk.EmbeddedResource:
			if s, text := embedded(c.Resource); s != "" {
				parts = append(parts, s)
				hasText = hasText || text
			}
		case nil:
		default:
			parts = append(parts, fmt.Sprintf("[%T content]", c))
		}
	}
	var raw any
	rawCut := false
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			if !hasText {
				parts = append(parts, string(b))
			}
			// The editor gets it as rawOutput, and the journal with it:
			// bounded as the text is.
			if len(b) <= maxOutput {
				raw = res.StructuredContent
			} else {
				rawCut = true
				parts = append(parts, fmt.Sprintf("[structured content of %d bytes not passed on: over %d bytes (%s)]", len(b), maxOutput, setting))
			}
		}
	}
	joined := strings.Join(parts, "\n")
	out := capText(joined, maxOutput, setting)
	cut = rawCut || len(out) != len(joined)
	if res.IsError {
		if out == "" {
			out = "the tool reported an error without a message"
		}
		return &tools.Result{Output: "MCP tool error: " + out, IsError: true, RawOutput: raw}, cut
	}
	if out == "" {
		out = "(the tool returned no content)"
	}
	return &tools.Result{Output: out, RawOutput: raw}, cut
}

func resourceLink(c *sdk.ResourceLink) string {
	var b strings.Builder
	b.WriteString("[resource link: ")
	if c.Name != "" {
		b.WriteString(c.Name)
		b.WriteString(" ")
	}
	b.WriteString("<" + c.URI + ">")
	if c.MIMEType != "" {
		b.WriteString(" (" + c.MIMEType + ")")
	}
	b.WriteString("]")
	if c.Description != "" {
		b.WriteString(" " + c.Description)
	}
	return b.String()
}

// embedded describes an embedded resource; text reports whether it had
// text of its own.
func embedded(r *sdk.ResourceContents) (s string, text bool) {
	if r == nil {
		return "", false
	}
	if r.Text != "" || len(r.Blob) == 0 {
		return fmt.Sprintf("[resource <%s>]\n%s", r.URI, r.Text), true
	}
	return fmt.Sprintf("[resource <%s>: %s, %d bytes]", r.URI, orUnknown(r.MIMEType), len(r.Blob)), false
}

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown type"
	}
	return mime
}

// capText keeps the first max bytes of s, cut on a rune boundary, and says
// how much was dropped and which setting bounds it.
func capText(s string, max int, setting string) string {
	if len(s) <= max {
		return s
	}
	head := utf8cut.Prefix(s, max)
	return head + fmt.Sprintf("\n[output truncated: %d of %d bytes shown (%s)]", len(head), len(s), setting)
}
