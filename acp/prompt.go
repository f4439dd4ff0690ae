// prompt.go: session/prompt, session/cancel and $/cancel_request (acp-v1 §9,
// §20).

package acp

// PromptRequest is the params of session/prompt (acp-v1 §9.1).
type PromptRequest struct {
	SessionID SessionID      `json:"sessionId"`
	Prompt    []ContentBlock `json:"prompt"`
	Meta      Meta           `json:"_meta,omitempty"`
}

// MarshalJSON implements json.Marshaler; nil Prompt is sent as [].
func (r PromptRequest) MarshalJSON() ([]byte, error) {
	r.Prompt = emptyIfNil(r.Prompt)
	return marshalFields(r)
}

// UnmarshalJSON implements json.Unmarshaler.
func (r *PromptRequest) UnmarshalJSON(b []byte) error { return promptDecoder.decode(b, r) }

var promptDecoder = newObjectDecoder[PromptRequest](memberOf("prompt", func(b []byte) ([]ContentBlock, error) {
	blocks, err := decodeList(b, UnmarshalContentBlock, false)
	if err != nil {
		return nil, paramsError("prompt", err)
	}
	return blocks, nil
}))

// Validate checks the required fields; which block types are allowed is the
// server's business (promptCapabilities).
func (r *PromptRequest) Validate() error {
	if r.Prompt == nil {
		return invalidField("prompt", "required")
	}
	for _, b := range r.Prompt {
		if err := validateContentBlock("prompt", b); err != nil {
			return err
		}
	}
	return requireSession(r.SessionID)
}

// PromptResponse is the result of session/prompt. Usage is unstable
// (rfd:end-turn-token-usage, acp-v1 §25): only schema.unstable.json
// defines it, and the stable PromptResponse allows it as an extra key. It
// has the shape of a subagent's idle usage ([Usage]).
type PromptResponse struct {
	StopReason StopReason `json:"stopReason"`
	Usage      *Usage     `json:"usage,omitempty"`
	Meta       Meta       `json:"_meta,omitempty"`
}

// CancelNotification is the params of session/cancel (acp-v1 §9.5).
type CancelNotification = SessionRequest

// CancelRequestNotification is the params of $/cancel_request (acp-v1 §20).
// Connections handle it themselves.
type CancelRequestNotification struct {
	RequestID RequestID `json:"requestId"`
	Meta      Meta      `json:"_meta,omitempty"`
}
