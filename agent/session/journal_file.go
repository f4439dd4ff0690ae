// This file holds what a journal needs of its file, and the cache that
// bounds how many journal files a store keeps open.

package session

import (
	"container/list"
	"os"
	"sync"
)

// journalFile is a journal's open file. The journal writes at offsets it
// tracks itself (it is the file's only writer), so after a failed write it
// knows where its last whole record ends and writes there again. Tests
// substitute a file that fails on purpose.
type journalFile interface {
	WriteAt(b []byte, off int64) (int, error)
	ReadAt(b []byte, off int64) (int, error)
	Truncate(size int64) error
	// Datasync makes the file's data durable (fdatasync on Linux).
	Datasync() error
	// Stat tells the file from others (os.SameFile): the journal checks
	// that its path still names it.
	Stat() (os.FileInfo, error)
	Close() error
}

// openFunc opens a journal's file with os.OpenFile's flag and perm.
type openFunc func(path string, flag int, perm os.FileMode) (journalFile, error)

// osFile is a journal file on disk.
type osFile struct{ *os.File }

func (f osFile) Datasync() error { return datasync(f.File) }

func openOSFile(path string, flag int, perm os.FileMode) (journalFile, error) {
	f, err := os.OpenFile(path, flag, perm)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

// DefaultOpenJournals is how many journal files a [Store] keeps open at
// once unless [StoreOptions] says otherwise.
const DefaultOpenJournals = 128

// fileCache bounds how many journal files are open at once: a journal
// opens its file when it writes, and the journal written least recently
// gives its file back when another needs one (it reopens it on its next
// write or sync). An idle session therefore holds no descriptor once 128
// others have written since. Closing a file loses nothing: what was
// written is in the OS, and a later fdatasync through a new descriptor
// flushes the file's data all the same.
//
// Lock order: a journal's mu, then the cache's mu; the cache never locks a
// journal, so a journal that must give its file back is closed by the
// caller after it has let go of its own journal's lock ([Journal.release]).
type fileCache struct {
	max int

	mu  sync.Mutex
	lru list.List // *Journal holding an open file, most recently used first
}

func newFileCache(max int) *fileCache {
	if max <= 0 {
		max = DefaultOpenJournals
	}
	return &fileCache{max: max}
}

// use marks j, which holds an open file, as just used. It returns the
// journal that must give its file back, if any. j.mu is held.
func (c *fileCache) use(j *Journal) (victim *Journal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if j.elem != nil {
		c.lru.MoveToFront(j.elem)
		return nil
	}
	j.elem = c.lru.PushFront(j)
	if c.lru.Len() <= c.max {
		return nil
	}
	back := c.lru.Back()
	victim = back.Value.(*Journal)
	c.lru.Remove(back)
	victim.elem = nil
	return victim
}

// drop forgets j, which is closing its file. j.mu is held.
func (c *fileCache) drop(j *Journal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if j.elem != nil {
		c.lru.Remove(j.elem)
		j.elem = nil
	}
}

// evicted reports whether j was pushed out of the cache since it last
// used its file. j.mu is held.
func (c *fileCache) evicted(j *Journal) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return j.elem == nil
}
