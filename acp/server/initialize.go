// This file implements initialize, authenticate and logout.

package server

import (
	"context"
	"crypto/subtle"
	"fmt"

	"github.com/dshd/dshd/acp"

	"github.com/dshd/dshd/acp/rpc"
)

// Auth method ids dshd advertises.
const (
	authToken  = "token"
	authAPIKey = "api-key"
	// metaToken is the _meta key of authenticate that carries the token.
	metaToken = "dshd.dev/token"
)

// Initialize negotiates the version (always 1) and advertises only what
// works.
func (c *Conn) Initialize(ctx context.Context, req *acp.InitializeRequest) (*acp.InitializeResponse, error) {
	c.mu.Lock()
	c.caps = req.ClientCapabilities
	c.mu.Unlock()
	c.initialized.Store(true)
	o := &c.srv.opts
	resp := &acp.InitializeResponse{
		ProtocolVersion: acp.ProtocolVersion1,
		AgentCapabilities: acp.AgentCapabilities{
			LoadSession: true,
			PromptCapabilities: acp.PromptCapabilities{
				Image:           true,
				EmbeddedContext: true,
			},
			McpCapabilities: acp.McpCapabilities{HTTP: o.ConnectMCP != nil && o.MCPHTTP, SSE: o.ConnectMCP != nil && o.MCPSSE},
			SessionCapabilities: acp.SessionCapabilities{
				List:                  &acp.EmptyCapability{},
				Resume:                &acp.EmptyCapability{},
				Close:                 &acp.EmptyCapability{},
				Delete:                &acp.EmptyCapability{},
				AdditionalDirectories: &acp.EmptyCapability{},
				// Unstable (rfd:session-fork): only schema.unstable.json
				// names it; a stable client ignores it.
				Fork: &acp.EmptyCapability{},
			},
		},
		AgentInfo:   &acp.Implementation{Name: o.Name, Title: o.Title, Version: o.Version},
		AuthMethods: []acp.AuthMethod{},
	}
	if o.Token != "" && !c.trusted {
		resp.AgentCapabilities.Auth.Logout = &acp.EmptyCapability{}
		resp.AuthMethods = append(resp.AuthMethods, &acp.AuthMethodAgent{
			ID:          authToken,
			Name:        "Daemon token",
			Description: fmt.Sprintf("This daemon requires its token (DSHD_TOKEN or --token-file). Pass it in authenticate's _meta as %q.", metaToken),
		})
	}
	if m := c.terminalAuth(); m != nil {
		resp.AuthMethods = append(resp.AuthMethods, m)
	}
	if c.keyMissing() {
		resp.AuthMethods = append(resp.AuthMethods, &acp.AuthMethodAgent{
			ID:          authAPIKey,
			Name:        "Model API key",
			Description: c.keyHelp(),
		})
	}
	return resp, nil
}

func (c *Conn) keyMissing() bool {
	o := &c.srv.opts
	return o.KeyEnv != "" && o.HasKey != nil && !o.HasKey()
}

func (c *Conn) keyHelp() string {
	return fmt.Sprintf("Set %s in dshd's environment to your model API key and restart dshd, or run `dshd auth` in a terminal to store the key for dshd (or choose a model that needs no key with --model-url and --api-key-env \"\", or --model scripted).", c.srv.opts.KeyEnv)
}

// Authenticate checks the daemon token, or re-checks the model key.
func (c *Conn) Authenticate(ctx context.Context, req *acp.AuthenticateRequest) (*acp.AuthenticateResponse, error) {
	o := &c.srv.opts
	switch req.MethodID {
	case authToken:
		if o.Token == "" {
			break
		}
		tok, _ := req.Meta[metaToken].(string)
		if subtle.ConstantTimeCompare([]byte(tok), []byte(o.Token)) != 1 {
			rpc.AuthFailed(ctx)
			return nil, acp.ErrAuthRequired.WithData(map[string]any{"reason": "wrong or missing token"})
		}
		c.mu.Lock()
		c.authed = true
		c.mu.Unlock()
		rpc.Authenticated(ctx)
		return &acp.AuthenticateResponse{}, nil
	case authAPIKey:
		if o.KeyEnv == "" {
			break
		}
		if c.keyMissing() {
			return nil, acp.ErrAuthRequired.WithData(map[string]any{"reason": c.keyHelp()})
		}
		return &acp.AuthenticateResponse{}, nil
	case authTerminal:
		return nil, acp.ErrInvalidParams.WithData(map[string]any{"field": "methodId", "reason": "a terminal auth method is run by the client (dshd auth in a terminal), never passed to authenticate"})
	}
	return nil, acp.ErrInvalidParams.WithData(map[string]any{"field": "methodId", "reason": fmt.Sprintf("unknown auth method %q", req.MethodID)})
}

// Logout returns the connection to the unauthenticated state (token
// daemons only, on a connection its transport did not vouch for;
// advertised only then).
func (c *Conn) Logout(ctx context.Context, req *acp.LogoutRequest) (*acp.LogoutResponse, error) {
	if c.srv.opts.Token == "" || c.trusted {
		return nil, acp.ErrMethodNotFound.WithData(map[string]any{"method": acp.MethodLogout})
	}
	c.mu.Lock()
	c.authed = false
	c.mu.Unlock()
	return &acp.LogoutResponse{}, nil
}

// requireAuth fails session methods before a successful authenticate on a
// token daemon.
func (c *Conn) requireAuth() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.authed {
		return acp.ErrAuthRequired.WithData(map[string]any{"reason": "authenticate with the daemon token first"})
	}
	return nil
}
