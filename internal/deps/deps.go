// Package deps pins the project's chosen dependencies in go.mod while the
// packages that use them are being written. Delete it once every import
// below has a real user.
package deps

import (
	_ "github.com/google/jsonschema-go/jsonschema"
	_ "github.com/google/uuid"
	_ "github.com/lmittmann/tint"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "github.com/sourcegraph/jsonrpc2"
	_ "github.com/spf13/cobra"
	_ "go.uber.org/goleak"
)
