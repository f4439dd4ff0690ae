// This file bounds the journal files held open: a journal opens its file
// to append and keeps it only until the Sync that makes its records
// durable, and at most maxOpenJournals journals keep one at once (the
// least recently written is closed first). Idle sessions, however many,
// hold no descriptor, so they cannot starve the daemon's accept loop.

package session

import (
	"container/list"
	"errors"
	"io/fs"
	"os"
	"sync"
)

// maxOpenJournals bounds the journal files open at once, whatever the
// number of sessions.
const maxOpenJournals = 64

// openJournals is the process's set of journals that hold their file.
var openJournals = &journalFiles{lru: list.New()}

// journalFiles orders the journals holding a file, most recently written
// first. Its lock is taken under a Journal's, never the other way round.
type journalFiles struct {
	mu  sync.Mutex
	lru *list.List // of *Journal
}

// touch marks j (whose file is open; under j.mu) as the most recently
// written and returns the journals to close to stay within the bound.
func (c *journalFiles) touch(j *Journal) []*Journal {
	c.mu.Lock()
	defer c.mu.Unlock()
	if j.elem != nil {
		c.lru.MoveToFront(j.elem)
		return nil
	}
	j.elem = c.lru.PushFront(j)
	var victims []*Journal
	for c.lru.Len() > maxOpenJournals {
		v := c.lru.Remove(c.lru.Back()).(*Journal)
		v.elem = nil
		victims = append(victims, v)
	}
	return victims
}

// forget takes j out of the set; under j.mu.
func (c *journalFiles) forget(j *Journal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if j.elem != nil {
		c.lru.Remove(j.elem)
		j.elem = nil
	}
}

// holds reports whether j is in the set; under j.mu.
func (c *journalFiles) holds(j *Journal) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return j.elem != nil
}

// file makes sure j's file is open for appending; under j.mu. It returns
// the journals to evict, once j.mu is released. A journal whose file is
// gone (Store.Delete) is marked deleted.
func (j *Journal) file() ([]*Journal, error) {
	if j.f == nil {
		f, err := os.OpenFile(j.path, os.O_WRONLY|os.O_APPEND, 0)
		if errors.Is(err, fs.ErrNotExist) {
			j.deleted = true
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		j.f = f
	}
	return openJournals.touch(j), nil
}

// park closes j's file; under j.mu.
func (j *Journal) park() {
	openJournals.forget(j)
	if j.f != nil {
		_ = j.f.Close()
		j.f = nil
	}
}

// evict closes the files of journals pushed out of the set, unless they
// were written again meanwhile. Their records need not be synced first:
// the next Sync reopens the file and fdatasyncs it, which makes every
// page of the file durable, and Linux (since 4.16) reports a writeback
// error to the next fsync of a file on any descriptor.
func evict(victims []*Journal) {
	for _, v := range victims {
		v.mu.Lock()
		if !openJournals.holds(v) && v.f != nil {
			_ = v.f.Close()
			v.f = nil
		}
		v.mu.Unlock()
	}
}
