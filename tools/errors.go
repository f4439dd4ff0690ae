// This file holds the package's sentinel errors and the typed errors that
// wrap them.

package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrCancelled is returned by a tool's Execute when the permission request
// it was waiting on was cancelled (the turn was cancelled, or the editor
// answered "cancelled"). It matches [context.Canceled], so the agent loop
// can treat it like any other cancellation and end the call as cancelled.
var ErrCancelled = fmt.Errorf("tools: call cancelled: %w", context.Canceled)

// ErrDuplicateTool reports a tool name that is already registered, in the
// registry itself or in one of its parents. The error returned by
// [Registry.Register] is a [*DuplicateToolError] that matches it.
var ErrDuplicateTool = errors.New("tools: duplicate tool name")

// ErrUnknownTool reports a tool name that no registry layer knows. The error
// returned by [Registry.Filter] is an [*UnknownToolError] that matches it.
var ErrUnknownTool = errors.New("tools: unknown tool")

// ErrInvalidToolName reports a tool name that is empty, longer than 64
// characters, or has a character other than letters, digits, '_' and '-'.
var ErrInvalidToolName = errors.New("tools: invalid tool name")

// DuplicateToolError is the error of registering a name twice.
type DuplicateToolError struct {
	Name string
}

func (e *DuplicateToolError) Error() string {
	return fmt.Sprintf("tools: duplicate tool name %q", e.Name)
}

// Is makes errors.Is(err, ErrDuplicateTool) true.
func (e *DuplicateToolError) Is(target error) bool { return target == ErrDuplicateTool }

// UnknownToolError names the tools a filter asked for that do not exist.
type UnknownToolError struct {
	Names []string
}

func (e *UnknownToolError) Error() string {
	quoted := make([]string, len(e.Names))
	for i, n := range e.Names {
		quoted[i] = fmt.Sprintf("%q", n)
	}
	return "tools: unknown tool " + strings.Join(quoted, ", ")
}

// Is makes errors.Is(err, ErrUnknownTool) true.
func (e *UnknownToolError) Is(target error) bool { return target == ErrUnknownTool }
