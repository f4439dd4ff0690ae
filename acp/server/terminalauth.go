// This file holds terminal auth (rfd:auth-methods, acp-v1 §7.1): a client
// that can run dshd in a terminal is offered `dshd auth`, which asks for
// the model key and stores it where the daemon finds it.

package server

import (
	"fmt"

	"github.com/dshd/dshd/acp"
)

// authTerminal is the id of the terminal auth method.
const authTerminal = "dshd-auth"

// terminalArgs are what the client appends to dshd's own command line to
// run the login: `dshd [flags] auth` and `dshd serve [flags] auth` both
// reach the auth command with the settings dshd was started with.
var terminalArgs = []string{"auth"}

// terminalAuth is the terminal auth method when the model needs a key and
// the client said it can run dshd in a terminal (auth.terminal), else nil:
// a client that did not say so must never see one.
func (c *Conn) terminalAuth() acp.AuthMethod {
	o := &c.srv.opts
	if o.KeyEnv == "" || o.HasKey == nil || !c.clientCaps().Auth.Terminal {
		return nil
	}
	return &acp.AuthMethodTerminal{
		ID:          authTerminal,
		Name:        "Enter your model API key",
		Description: fmt.Sprintf("Runs `dshd auth` in a terminal: it asks for the key (%s) without showing it and stores it, readable by you only, in dshd's config dir, where new sessions find it.", o.KeyEnv),
		Args:        terminalArgs,
	}
}
