// This file chooses the sandbox stdio MCP servers run in (--mcp-sandbox).

package daemon

import (
	"log/slog"

	"github.com/dshd/dshd/tools/localrun"
	"github.com/dshd/dshd/tools/sandbox"
)

// mcpSandbox returns the sandbox of every session's stdio MCP servers:
// the commands' own ("commands", the default), so a server writes only
// where a command may and dies with dshd with everything it started; or,
// for "off", one that confines nothing but still ties them to dshd's
// lifetime the way --sandbox off does for commands.
func mcpSandbox(setting string, commands *localrun.Runner, log *slog.Logger) (*sandbox.Sandbox, error) {
	if setting == "off" {
		// What chose its mode, should it ever describe it.
		return sandbox.New(&sandbox.Config{Mode: sandbox.Off, Logger: log, Settings: sandbox.Settings{Mode: "--mcp-sandbox"}})
	}
	return commands.Sandbox(), nil
}
