// This file reads a journal without opening it for writing.

package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ReadJournal returns every complete record of session id's journal in
// dir, as [OpenJournal] does, without opening the file for writing: a
// viewer (dshd sessions show) may read a session a daemon has open, and
// never repairs or appends to it. A missing journal is ErrNotFound.
func ReadJournal(dir, id string, opts *JournalOptions) ([]Record, error) {
	if err := checkID(id); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	f, err := os.Open(JournalPath(dir, id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	if err != nil {
		return nil, fmt.Errorf("session: open journal: %w", err)
	}
	defer f.Close()
	recs, _, _, err := readRecords(f, opts.logger().With("session", id))
	if err != nil {
		return nil, fmt.Errorf("session: read journal: %w", err)
	}
	return recs, nil
}
