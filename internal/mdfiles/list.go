// This file lists a directory's Markdown files and stamps them.

package mdfiles

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dshd/dshd/internal/smallfile"
)

// File is a Markdown file of a directory as a stat of it found it; the
// stat follows a symlink (one of a workspace's only while it stays inside
// the workspace: see [List]), so Info is the file's and not the link's.
type File struct {
	Path string
	Info fs.FileInfo // nil when Err is set
	Err  error       // why the stat failed
}

// Stamp identifies a version of a file without reading it.
type Stamp struct {
	Path    string
	Size    int64 // -1 for no file: see [StampOf]
	ModTime int64 // nanoseconds
	// Type is the file's type bits (0 for a regular file), so a file that
	// is not regular is known as such without opening it.
	Type fs.FileMode
}

// Stamp returns the stamp of f, which must have an Info.
func (f File) Stamp() Stamp { return stampOf(f.Path, f.Info) }

func stampOf(path string, info fs.FileInfo) Stamp {
	return Stamp{Path: path, Size: info.Size(), ModTime: info.ModTime().UnixNano(), Type: info.Mode().Type()}
}

// StampOf stamps the file at path, following a symlink: a file a listed
// one names (an agent definition's schema file). When root is not "",
// path is a file of the workspace root, stat'ed through it as [List]
// stats one. A file that cannot be stat'ed has the stamp of no file, Size
// -1, so its coming back is a change.
func StampOf(root, path string) Stamp {
	var info fs.FileInfo
	r, err := openRoot(root)
	if err == nil {
		defer r.close()
		info, err = r.stat(path)
	}
	if err != nil {
		return Stamp{Path: path, Size: -1}
	}
	return stampOf(path, info)
}

// Settle is how old a modification time must be, when a stamp is taken,
// for the stamp to be trusted to move at the file's next change. A file
// system stamps a change with a clock that ticks (jiffies on Linux, 2 s
// on FAT), so a second write of the same size within the tick of the
// first keeps both Size and ModTime as they were.
const Settle = 2 * time.Second

// Settled reports whether s, taken at now, is of a version at least
// Settle old: a later change of that file then shows in its stamp.
func (s Stamp) Settled(now time.Time) bool { return now.UnixNano()-s.ModTime >= int64(Settle) }

// List returns the first max entries of dir named *.md that are not
// directories, by name, each with its stat, and how many more dir holds:
// those are neither stat'ed nor kept, so a directory costs one pass over
// its names and at most max stats, however many files a repository put
// in it. A directory that does not exist has none; any other failure to
// read it is the error (a FIFO in its place is one at once: the open
// takes only a directory, and does not wait).
//
// When root is not "", dir is a directory of the workspace root (a
// repository's), listed and its files stat'ed through root as an os.Root
// (internal/smallfile): a directory or a file that leads outside root, by
// a symbolic link, is a [*smallfile.OutsideError], as the error or as
// the file's Err, and nothing outside is stat'ed. When root is "", dir
// is the user's own, and a link is followed wherever it leads.
//
// The names are read all at once: one open and its reads are the fewest
// system calls a listing takes, and this one is taken at every turn of
// every session. Reading them a chunk at a time would hold fewer at
// once, at two system calls more for each directory.
func List(root, dir string, max int) (files []File, more int, err error) {
	r, err := openRoot(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	defer r.close()
	entries, err := r.readDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		if len(files) == max {
			more++
			continue
		}
		path := filepath.Join(dir, e.Name())
		info, err := r.stat(path)
		files = append(files, File{Path: path, Info: info, Err: err})
	}
	return files, more, nil
}

// tree is where [List] and [StampOf] look: a workspace through its root,
// or (root nil) the user's own files, following links anywhere.
type tree struct{ root *smallfile.Root }

// openRoot is the tree of the workspace root, or of the user's files when
// root is "".
func openRoot(root string) (tree, error) {
	if root == "" {
		return tree{}, nil
	}
	r, err := smallfile.OpenRoot(root)
	return tree{r}, err
}

func (t tree) close() {
	if t.root != nil {
		t.root.Close()
	}
}

func (t tree) readDir(dir string) ([]fs.DirEntry, error) {
	if t.root == nil {
		return os.ReadDir(dir)
	}
	return t.root.ReadDir(dir)
}

func (t tree) stat(path string) (fs.FileInfo, error) {
	if t.root == nil {
		return os.Stat(path)
	}
	return t.root.Stat(path)
}
