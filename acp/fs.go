// fs.go: the client's file-system methods (acp-v1 §17).

package acp

// ReadTextFileRequest is the params of fs/read_text_file; Line is 1-based.
type ReadTextFileRequest struct {
	SessionID SessionID `json:"sessionId"`
	Path      string    `json:"path"`
	Line      *uint32   `json:"line,omitempty"`
	Limit     *uint32   `json:"limit,omitempty"`
	Meta      Meta      `json:"_meta,omitempty"`
}

// Validate checks the required fields.
func (r *ReadTextFileRequest) Validate() error {
	return requireWithSession(r.SessionID, "path", r.Path)
}

// ReadTextFileResponse is the result of fs/read_text_file.
type ReadTextFileResponse struct {
	Content string `json:"content"`
	Meta    Meta   `json:"_meta,omitempty"`
}

// WriteTextFileRequest is the params of fs/write_text_file.
type WriteTextFileRequest struct {
	SessionID SessionID `json:"sessionId"`
	Path      string    `json:"path"`
	Content   string    `json:"content"`
	Meta      Meta      `json:"_meta,omitempty"`
}

// Validate checks the required fields.
func (r *WriteTextFileRequest) Validate() error {
	return requireWithSession(r.SessionID, "path", r.Path)
}

// WriteTextFileResponse is the (empty) result of fs/write_text_file.
type WriteTextFileResponse = EmptyResponse
