// This file reads back what a live session has recorded, for a client
// that loads the session again on the connection that has it open.

package session

import (
	"encoding/json"
	"log/slog"
	"os"
)

// RecordedUpdates returns the session/update params the session's journal
// holds so far, in order, read from its file. A session that records
// nothing has none. A record being appended while it reads may be left
// out.
func (s *Session) RecordedUpdates() ([]json.RawMessage, error) {
	if s.stored == nil {
		return nil, nil
	}
	f, err := os.Open(s.stored.journal.Path())
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// A torn last line here is an append in flight, not damage: no warning.
	recs, _, _, err := readRecords(f, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, err
	}
	var out []json.RawMessage
	for _, r := range recs {
		if r.Kind == KindUpdate {
			out = append(out, r.Data)
		}
	}
	return out, nil
}
