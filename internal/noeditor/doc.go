// Package noeditor holds the part of an ACP client that a client without
// an editor shares: it offers no file system, no terminals and no
// elicitation, so the agent uses its own disk and runs commands itself.
// Clients without an editor (the bench's, the demo's) embed it.
package noeditor
