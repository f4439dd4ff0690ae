// Package frontmatter reads a Markdown file that opens with YAML front
// matter: the lines between a first line "---" and the next line "---"
// (or "..."), and the body after them. Agent definitions
// (subagents/definition) and slash command files (prompt/commands) are
// such files.
//
// It keeps each top-level key's position, so that a consumer's error can
// point at the line and column of the key that is wrong, and it converts
// values the few ways those files need: a string, an integer, a list (a
// YAML sequence or Claude Code's comma-separated string) and JSON (an
// inline JSON Schema). Duplicate keys and a front matter that is not a
// mapping are errors.
//
// YAML is parsed with go.yaml.in/yaml/v3, the YAML organisation's
// maintained continuation of gopkg.in/yaml.v3. The package imports
// nothing of the project and starts no goroutines.
package frontmatter
