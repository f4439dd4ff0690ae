// This file holds the agent definition file the tests of the definition
// loader and of the daemon read as Claude Code writes it.

package subagenttest

// ClaudeCodeReviewer is a subagent file in the format Claude Code's
// documentation gives ("code-reviewer"), keys dshd does not use included:
// it must work unchanged.
const ClaudeCodeReviewer = `---
name: code-reviewer
description: Expert code review specialist. Proactively reviews code for quality, security, and maintainability. Use immediately after writing or modifying code.
tools: Read, Grep, Glob, Bash
model: inherit
color: blue
---

You are a senior code reviewer ensuring high standards of code quality and security.

When invoked:
1. Run git diff to see recent changes
2. Focus on modified files
3. Begin review immediately
`
