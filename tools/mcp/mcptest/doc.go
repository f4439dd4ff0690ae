// Package mcptest finds the MCP server the tests of tools/mcp and of the
// dshd command run against: @modelcontextprotocol/server-everything, which
// `make npm` installs, run by node.
package mcptest
