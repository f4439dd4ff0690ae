// This file builds the model-facing names of MCP tools: mcp__SERVER__TOOL,
// sanitized to what every model API accepts, deterministic, unique.

package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// maxNameLen is the longest tool name model APIs accept.
const maxNameLen = 64

// namePrefix starts every MCP tool name.
const namePrefix = "mcp__"

// hashLen is the length of the "_xxxxxxxx" suffix of a hashed name.
const hashLen = 9

// toolName returns the model-facing name of the server's tool: the plain
// form when it fits in 64 characters, the hashed form otherwise.
func toolName(server, tool string) string {
	n := plainName(server, tool)
	if len(n) <= maxNameLen {
		return n
	}
	return hashedName(server, tool)
}

// plainName is mcp__SERVER__TOOL with both parts sanitized, of any length.
func plainName(server, tool string) string {
	return namePrefix + sanitize(server) + "__" + sanitize(tool)
}

// hashedName is the plain name cut to leave room for "_" and 8 hex digits
// of a hash of the raw server and tool names. It is what a name gets when
// it is too long, or when its plain form is already taken by another tool
// of the same server ("a.b" and "a_b" both sanitize to "a_b").
func hashedName(server, tool string) string {
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	n := plainName(server, tool)
	if len(n) > maxNameLen-hashLen {
		n = n[:maxNameLen-hashLen]
	}
	return n + "_" + hex.EncodeToString(sum[:4])
}

// sanitize replaces every character outside [A-Za-z0-9_-] with '_', one
// '_' per rune (invalid UTF-8 counts a byte per rune).
func sanitize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-':
			b.WriteByte(c)
			i++
		default:
			_, size := utf8.DecodeRuneInString(s[i:])
			b.WriteByte('_')
			i += size
		}
	}
	return b.String()
}
