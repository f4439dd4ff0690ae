// This file tells, with a few stats, whether a catalog's files may have
// changed since it last read them.

package commands

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/dshd/dshd/internal/mdfiles"
)

// settle is how old a modification time must be, when seen, to be
// trusted to move on the next change. A file system stamps a change with
// a clock that ticks (jiffies on Linux, 2 s on FAT), so a second change
// in the tick of the one seen may keep the time as it was; a look that
// saw a newer time is not trusted, and the next Refresh reads the files.
const settle = 2 * time.Second

// look is what a stat of each source directory and command file found.
type look struct {
	sources []sourceLook
	// filesTrusted is false when a command file's time was newer than
	// settle, or a stat or listing failed otherwise than for a missing
	// path: the files may change unseen, and must be read again.
	filesTrusted bool
	// dirsTrusted is false when a watched directory's time was newer
	// than settle: an entry may come or go unseen, so the directories
	// must be listed again (not the files read: the listing tells).
	dirsTrusted bool
}

// sourceLook is one source as a look found it. A directory that does not
// exist is watched through its nearest ancestor that does: creating it,
// or a missing parent of it, changes that ancestor's modification time.
// A directory that exists changes its time when an entry is added,
// removed or renamed, but not when a file is rewritten in place, so each
// file is stamped too.
type sourceLook struct {
	watched string
	info    fs.FileInfo
	listed  bool       // the directory exists and was listed
	files   []fileLook // its *.md entries
}

// fileLook is the stamp of one *.md entry; ok is false when its stat
// failed (a dangling link), so the link's target appearing is a change.
type fileLook struct {
	path string
	ok   bool
	size int64
	mod  int64 // nanoseconds
}

// lookAt stats the sources, listing the directories that exist.
func lookAt(sources []Source) look {
	now := time.Now() // before the stats: a change during them is too new to trust
	l := look{filesTrusted: true, dirsTrusted: true}
	fresh := func(t time.Time) bool { return now.Sub(t) < settle }
	for _, src := range sources {
		s, ok := watch(src.Dir)
		switch {
		case !ok:
			l.filesTrusted, l.dirsTrusted = false, false
		case fresh(s.info.ModTime()):
			l.dirsTrusted = false
		}
		if ok && s.watched == src.Dir && s.info.IsDir() {
			s.listed = true
			files, err := mdfiles.List(src.Dir)
			if err != nil {
				l.filesTrusted = false
			}
			for _, f := range files {
				fl := fileLook{path: f.Path, ok: f.Err == nil}
				if fl.ok {
					fl.size, fl.mod = f.Info.Size(), f.Info.ModTime().UnixNano()
					if fresh(f.Info.ModTime()) {
						l.filesTrusted = false
					}
				}
				s.files = append(s.files, fl)
			}
		}
		l.sources = append(l.sources, s)
	}
	return l
}

// watch stats dir, or its nearest ancestor that exists when it does not;
// ok is false when a stat failed for another reason.
func watch(dir string) (s sourceLook, ok bool) {
	for p := dir; ; {
		info, err := os.Stat(p)
		if err == nil {
			return sourceLook{watched: p, info: info}, true
		}
		parent := filepath.Dir(p)
		if !errors.Is(err, fs.ErrNotExist) || parent == p {
			return sourceLook{watched: p}, false
		}
		p = parent
	}
}

// unchanged reports whether a stat of each watched directory and listed
// file finds what l found: then no command file was added, changed or
// removed since. An untrusted look is never unchanged.
func (l look) unchanged() bool {
	if !l.filesTrusted || !l.dirsTrusted {
		return false
	}
	for i, s := range l.sources {
		if !l.statedBefore(i) {
			info, err := os.Stat(s.watched)
			if err != nil || !os.SameFile(info, s.info) || !info.ModTime().Equal(s.info.ModTime()) {
				return false
			}
		}
		for _, f := range s.files {
			info, err := os.Stat(f.path)
			if (err == nil) != f.ok || err == nil && (info.Size() != f.size || info.ModTime().UnixNano() != f.mod) {
				return false
			}
		}
	}
	return true
}

// statedBefore reports whether an earlier source watches the same path
// (the workspace, when neither .dshd nor .claude exists), already checked.
func (l look) statedBefore(i int) bool {
	for _, s := range l.sources[:i] {
		if s.watched == l.sources[i].watched {
			return true
		}
	}
	return false
}

// sameFiles reports whether l and m found the same directories and the
// same stamps of the same files. Only when l's file times were trusted
// does that prove the files as read after l are still current.
func (l look) sameFiles(m look) bool {
	return l.filesTrusted && slices.EqualFunc(l.sources, m.sources, func(a, b sourceLook) bool {
		return a.listed == b.listed && slices.Equal(a.files, b.files)
	})
}
