// This file implements the unstable session/fork (rfd:session-fork).

package server

import (
	"context"

	"github.com/dshd/dshd/acp"
)

// ForkSession starts a new session from an existing session's history.
func (c *Conn) ForkSession(ctx context.Context, req *acp.ForkSessionRequest) (*acp.ForkSessionResponse, error) {
	return nil, acp.ErrMethodNotFound.WithData(map[string]any{"method": acp.MethodSessionFork})
}
