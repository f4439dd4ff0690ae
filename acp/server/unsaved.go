// This file maps a store that cannot save to the answers of the requests
// it refuses: a prompt not run, a mode, model or thinking change not made,
// a session not created or forked, a close that could not save. Each says
// in a sentence what was not done and why, with data {reason, saved}.

package server

import (
	"errors"
	"io/fs"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/agent/session"
)

// unsavedError is the JSON-RPC error of a request that was refused, its
// work not done (what says which), because the session's journal cannot
// save, when err says so; nil otherwise. Nothing of the request was
// recorded.
func unsavedError(what string, err error) error {
	var ns *session.NotSavedError
	if !errors.As(err, &ns) {
		return nil
	}
	return &acp.Error{Code: acp.ErrInternal.Code, Message: what + ": " + cannotSave(ns), Data: unsavedData(ns.Err.Error())}
}

// cannotSave says why a session cannot save, and what its client can do.
func cannotSave(ns *session.NotSavedError) string {
	cause := ns.Err.Error()
	switch {
	case errors.Is(ns.Err, session.ErrJournalGone):
		return cause + "; nothing more of this session can be saved, start a new one"
	case ns.Lost:
		return "the session cannot be saved any more, records were lost (" + cause + "); close it and load it again to continue from what was saved"
	}
	return "the session cannot save (" + cause + ")"
}

// unsavedData is the data of an answer that says something was not saved:
// why, and that the session does not save (yet).
func unsavedData(reason string) map[string]any {
	return map[string]any{"reason": reason, "saved": false}
}

// changeRefused is the error of a mode, model or thinking change (what
// says which was not made) the session refused: the disk bounds, or a
// journal that cannot save.
func changeRefused(s *session.Session, what string, err error) error {
	if le := limitError(what, acp.SessionID(s.ID()), err); le != nil {
		return le
	}
	if ue := unsavedError(what, err); ue != nil {
		return ue
	}
	return acp.ErrInternal.Errorf("%v", err)
}

// storeRefused is the error of a session/new or fork (what says which was
// not made; id is a fork's source) the store refused: a disk bound, or a
// journal it could not create or save. The store left nothing of it.
func storeRefused(what string, id acp.SessionID, err error) error {
	if le := limitError(what, id, err); le != nil {
		return le
	}
	reason := err.Error()
	var ns *session.NotSavedError
	var pe *fs.PathError
	switch {
	case errors.As(err, &ns):
		reason = ns.Err.Error()
	case errors.As(err, &pe):
		reason = pe.Error()
	}
	data := unsavedData(reason)
	if id != "" {
		data["sessionId"] = id
	}
	return &acp.Error{Code: acp.ErrInternal.Code, Message: what + ": it could not be saved (" + reason + "); nothing of it was kept", Data: data}
}

// closedUnsaved is the answer of a session/close whose session is closed
// but whose last records could not be saved (err, from closing it): they
// are lost, and a load has the session as it was last saved. Nil when
// everything was saved.
func closedUnsaved(err error) error {
	if err == nil {
		return nil
	}
	reason := err.Error()
	var ns *session.NotSavedError
	if errors.As(err, &ns) {
		reason = ns.Err.Error()
	}
	return &acp.Error{Code: acp.ErrInternal.Code,
		Message: "The session was closed, but its last records were not saved (" + reason + "); loading it continues from what was saved before",
		Data:    unsavedData(reason)}
}
