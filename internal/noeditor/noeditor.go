package noeditor

import (
	"context"

	"github.com/dshd/dshd/acp"
)

// Methods answers every editor method of [acp.Client] (fs/*, terminal/*,
// elicitation/create) with method-not-found and ignores
// elicitation/complete. Embed it and add SessionUpdate and
// RequestPermission to make a client.
type Methods struct{}

func (Methods) ReadTextFile(context.Context, *acp.ReadTextFileRequest) (*acp.ReadTextFileResponse, error) {
	return nil, acp.ErrMethodNotFound
}
func (Methods) WriteTextFile(context.Context, *acp.WriteTextFileRequest) (*acp.WriteTextFileResponse, error) {
	return nil, acp.ErrMethodNotFound
}
func (Methods) CreateTerminal(context.Context, *acp.CreateTerminalRequest) (*acp.CreateTerminalResponse, error) {
	return nil, acp.ErrMethodNotFound
}
func (Methods) TerminalOutput(context.Context, *acp.TerminalOutputRequest) (*acp.TerminalOutputResponse, error) {
	return nil, acp.ErrMethodNotFound
}
func (Methods) WaitForTerminalExit(context.Context, *acp.WaitForTerminalExitRequest) (*acp.WaitForTerminalExitResponse, error) {
	return nil, acp.ErrMethodNotFound
}
func (Methods) KillTerminal(context.Context, *acp.KillTerminalRequest) (*acp.KillTerminalResponse, error) {
	return nil, acp.ErrMethodNotFound
}
func (Methods) ReleaseTerminal(context.Context, *acp.ReleaseTerminalRequest) (*acp.ReleaseTerminalResponse, error) {
	return nil, acp.ErrMethodNotFound
}
func (Methods) CreateElicitation(context.Context, *acp.CreateElicitationRequest) (*acp.CreateElicitationResponse, error) {
	return nil, acp.ErrMethodNotFound
}
func (Methods) CompleteElicitation(context.Context, *acp.CompleteElicitationNotification) error {
	return nil
}
