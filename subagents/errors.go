// This file defines the seam's typed errors.

package subagents

import "fmt"

// Code classifies an [Error].
type Code string

// Error codes of the seam.
const (
	// CodeDuplicateProvider: a provider with that name is registered.
	CodeDuplicateProvider Code = "DUPLICATE_PROVIDER"
	// CodeNoProvider: no provider with that name is registered.
	CodeNoProvider Code = "NO_PROVIDER"
	// CodeUnsupportedCapability: the request needs a start-time capability
	// the provider does not declare.
	CodeUnsupportedCapability Code = "UNSUPPORTED_CAPABILITY"
	// CodeDepthLimit: the child would be deeper than the limit in force.
	CodeDepthLimit Code = "DEPTH_LIMIT"
	// CodeInvalidRequest: the request or provider is malformed (no parent,
	// no name).
	CodeInvalidRequest Code = "INVALID_REQUEST"
	// CodeRunFinished: a runtime method (steer, resume) was used on a run
	// that cannot take it any more.
	CodeRunFinished Code = "RUN_FINISHED"
)

// Error is a seam failure with a [Code]. errors.Is matches any *Error with
// the same code, so callers test against the sentinels below whatever the
// message says.
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string {
	if e.Message == "" {
		return "subagents: " + string(e.Code)
	}
	return "subagents: " + e.Message
}

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Sentinels for errors.Is; each matches every *Error of its code.
var (
	ErrDuplicateProvider     = &Error{Code: CodeDuplicateProvider}
	ErrNoProvider            = &Error{Code: CodeNoProvider}
	ErrUnsupportedCapability = &Error{Code: CodeUnsupportedCapability}
	ErrDepthLimit            = &Error{Code: CodeDepthLimit}
	ErrInvalidRequest        = &Error{Code: CodeInvalidRequest}
	ErrRunFinished           = &Error{Code: CodeRunFinished}
)

func errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
