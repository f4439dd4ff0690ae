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
	info, err := statBelow(root, path)
	if err != nil {
		return Stamp{Path: path, Size: -1}
	}
	return stampOf(path, info)
}

// statBelow is the stat of path, through the workspace root, or
// following links anywhere when root is "".
func statBelow(root, path string) (fs.FileInfo, error) {
	if root == "" {
		return os.Stat(path)
	}
	r, err := smallfile.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.Stat(path)
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
	l, err := open(root, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	defer l.close()
	for i, name := range l.names {
		if !strings.HasSuffix(name, ".md") {
			continue
		}
		if len(files) == max {
			more++
			continue
		}
		info, err := l.stat(i)
		if err == nil && info.IsDir() {
			continue
		}
		files = append(files, File{Path: filepath.Join(dir, name), Info: info, Err: err})
	}
	return files, more, nil
}

// listing is a directory [List] reads, its entries' names sorted.
type listing struct {
	path  string
	names []string
	// entries are the entries of a plain listing (os.ReadDir), one for
	// each name: the user's directory, or a workspace's with no link on
	// its way. Their types say which are links.
	entries []fs.DirEntry
	// workspace is the workspace of a workspace's directory, and root
	// the workspace opened as an os.Root (internal/smallfile) when a link
	// is to be followed, which it is only while it stays inside. dir is
	// set when a directory on the way is a link: the directory is then
	// listed and its entries stat'ed through root.
	workspace string
	root      *smallfile.Root
	dir       *smallfile.Dir
}

// open lists dir, of the workspace root or the user's when root is "".
//
// A workspace's directory with no link on its way from root is listed
// as the user's is, and its entries' links are followed through root: at
// every turn that costs a stat of each directory on the way more than the
// user's listing, where a listing through root costs a dozen system
// calls more. Nothing outside the workspace is read either way: a file's
// text is read through root ([smallfile.ReadBelow]). A directory on the
// way swapped for a link after its stat could show the names and the
// stats of files outside, not what they hold.
func open(root, dir string) (*listing, error) {
	l := &listing{path: dir, workspace: root}
	if root != "" {
		linked, err := linkOnTheWay(root, dir)
		if err != nil {
			return nil, err
		}
		if linked {
			return l, l.openThroughRoot()
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if !e.IsDir() { // os.ReadDir knows their types at no cost
			l.entries = append(l.entries, e)
			l.names = append(l.names, e.Name())
		}
	}
	return l, nil
}

// linkOnTheWay reports whether a directory from root down to dir is a
// symbolic link; dir outside root is an [*smallfile.OutsideError], and
// one that is not there an error for which errors.Is(err,
// fs.ErrNotExist).
func linkOnTheWay(root, dir string) (bool, error) {
	rel, err := filepath.Rel(root, dir)
	if err != nil || !filepath.IsLocal(rel) {
		return false, &smallfile.OutsideError{Root: root}
	}
	p := root
	for c := range strings.SplitSeq(rel, string(filepath.Separator)) {
		p = filepath.Join(p, c)
		info, err := os.Lstat(p)
		if err != nil {
			return false, err
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			return true, nil
		}
	}
	return false, nil
}

// openThroughRoot lists l's directory through its workspace as an
// os.Root; its names come without their types (a directory opened in an
// os.Root lists with a stat of each entry otherwise), so a directory
// named *.md past the count is counted.
func (l *listing) openThroughRoot() error {
	r, err := smallfile.OpenRoot(l.workspace)
	if err != nil {
		return err
	}
	l.root = r
	if l.dir, err = r.OpenDir(l.path); err == nil {
		l.names, err = l.dir.Names()
	}
	if err != nil {
		l.close()
	}
	return err
}

func (l *listing) close() {
	if l.dir != nil {
		l.dir.Close()
	}
	if l.root != nil {
		l.root.Close()
	}
}

// stat is the stat of the entry i, following a link (a workspace's while
// it stays inside the workspace).
func (l *listing) stat(i int) (fs.FileInfo, error) {
	path := filepath.Join(l.path, l.names[i])
	switch {
	case l.dir != nil:
		return l.dir.Stat(l.names[i])
	case l.workspace == "":
		return os.Stat(path)
	case l.entries[i].Type()&fs.ModeSymlink == 0:
		return l.entries[i].Info()
	}
	if l.root == nil {
		r, err := smallfile.OpenRoot(l.workspace)
		if err != nil {
			return nil, err
		}
		l.root = r
	}
	return l.root.Stat(path)
}
