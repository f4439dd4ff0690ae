// This file walks directory trees in parallel for glob and grep, skipping
// .git and what .gitignore files exclude.

package search

import (
	"cmp"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/dshd/dshd/internal/settingnames"
	"github.com/dshd/dshd/internal/smallfile"
)

// Walker walks the tree below Root/Start. Paths it reports are
// slash-separated and relative to Root. Nothing outside Root is read:
// every directory is opened through the os.Root, so a symlink swapped in
// during the walk cannot lead out of it; symlinks in the tree are
// reported, never followed; and the files of a directory are opened
// through its handle without following symlinks ([Dir.Open]).
type Walker struct {
	Root  *os.Root
	Start string // the directory to walk, relative to Root; "" for Root
	// Gitignore makes the walk skip what .gitignore files exclude, reading
	// those between Root and Start first, and .git/info/exclude at Root.
	Gitignore bool
	// Workers is the number of goroutines walking; 0 means twice
	// GOMAXPROCS, between 4 and 32.
	Workers int
	// EnterDir, when set, is asked before a directory is read; false skips
	// it and everything below.
	EnterDir func(rel string) bool
	// Visit is called for every entry that is not ignored, directories
	// included, from several goroutines at once. dir is the directory
	// holding the entry, valid until Visit returns.
	Visit func(rel string, d fs.DirEntry, dir *Dir)
	// Limits bound what the walk reads itself; zero fields are the
	// defaults.
	Limits Limits

	ignoreBound smallfile.Bound // from Limits, set by Run

	mu     sync.Mutex
	unused []*IgnoreFileError // guarded by mu
}

// DefaultMaxIgnoreFileBytes is the largest .gitignore (or
// .git/info/exclude) a walk reads when [Limits] say nothing.
const DefaultMaxIgnoreFileBytes = 1 << 20

// Limits bound the files a walk reads itself: the ignore files a
// repository holds, which it decides the size of, and which a walk reads
// on several goroutines at once.
type Limits struct {
	// MaxIgnoreFileBytes is the largest ignore file read (0:
	// [DefaultMaxIgnoreFileBytes]); a larger one is not used, and
	// [Walker.IgnoreFileErrors] names it with the setting.
	MaxIgnoreFileBytes int64
	// Settings names the limits where a hit is said.
	Settings Settings
}

// Settings are the names of the [Limits] in what a walk says of a hit
// (internal/settingnames): the daemon's flags.
type Settings struct {
	MaxIgnoreFileBytes string
}

// ignoreBound is how the walk l bounds reads an ignore file.
func (l Limits) ignoreBound() smallfile.Bound {
	settingnames.Fill(&l.Settings)
	return smallfile.Bound{Max: cmp.Or(l.MaxIgnoreFileBytes, DefaultMaxIgnoreFileBytes), What: "an ignore file", Setting: l.Settings.MaxIgnoreFileBytes}
}

// IgnoreFileError is an ignore file the walk could not use (a FIFO, a
// device, a symbolic link in the tree, one too large or unreadable): its
// rules were not applied.
type IgnoreFileError struct {
	Rel string // slash path below Root
	Err error
}

func (e *IgnoreFileError) Error() string { return e.Rel + ": " + e.Err.Error() }

// IgnoreFileErrors returns the ignore files the last Run could not use,
// by path, so the caller can say that their rules were not applied.
func (w *Walker) IgnoreFileErrors() []*IgnoreFileError {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := slices.Clone(w.unused)
	slices.SortFunc(out, func(a, b *IgnoreFileError) int { return strings.Compare(a.Rel, b.Rel) })
	return out
}

// readIgnore reads the ignore file rel (slash-separated) below Root
// through the one reader of a file a repository controls
// (internal/smallfile); typ is its type as its directory's listing said,
// 0 when it was not listed. A file it cannot use is noted for
// [Walker.IgnoreFileErrors]; one that is not there is none.
func (w *Walker) readIgnore(rel string, typ fs.FileMode) ([]ignoreRule, bool) {
	var data []byte
	var err error = &smallfile.NotRegularError{Mode: typ}
	// A link in the tree is not followed, as git does not follow one.
	if typ&fs.ModeSymlink == 0 {
		data, err = smallfile.ReadIn(w.Root, osRel(rel), w.ignoreBound)
	}
	// ENOTDIR: .git is a file in a linked worktree or a submodule.
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, false
	}
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // rel names the file
		}
		w.mu.Lock()
		w.unused = append(w.unused, &IgnoreFileError{Rel: rel, Err: err})
		w.mu.Unlock()
		return nil, false
	}
	return parseGitignore(string(data)), true
}

// walkJob is a directory to read, or a batch of its files to visit.
type walkJob struct {
	rel   string
	stack *ignoreStack
	files []fs.DirEntry
	dir   *Dir // the open directory of a batch of files
}

// fileBatch is how many files of one directory a worker visits before it
// hands the rest to other workers, so one huge directory is shared out.
const fileBatch = 64

// Run walks until done or ctx ends; it returns ctx's error in that case.
func (w *Walker) Run(ctx context.Context) error {
	workers := w.Workers
	if workers <= 0 {
		workers = min(max(4, 2*runtime.GOMAXPROCS(0)), 32)
	}
	w.mu.Lock()
	w.unused = nil
	w.mu.Unlock()
	w.ignoreBound = w.Limits.ignoreBound()
	var stack *ignoreStack
	if w.Gitignore {
		stack = w.ancestorIgnores()
	}
	var (
		mu     sync.Mutex
		cond   = sync.NewCond(&mu)
		queue  = []walkJob{{rel: w.Start, stack: stack}}
		active int
	)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				mu.Lock()
				for len(queue) == 0 && active > 0 {
					cond.Wait()
				}
				if len(queue) == 0 {
					mu.Unlock()
					return
				}
				j := queue[len(queue)-1]
				queue = queue[:len(queue)-1]
				active++
				mu.Unlock()

				var more []walkJob
				if ctx.Err() == nil {
					more = w.do(j)
				}

				mu.Lock()
				queue = append(queue, more...)
				active--
				if len(more) > 0 || active == 0 {
					cond.Broadcast()
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return ctx.Err()
}

// do runs one job and returns the jobs it found.
func (w *Walker) do(j walkJob) []walkJob {
	if j.files != nil {
		for _, d := range j.files {
			w.Visit(joinRel(j.rel, d.Name()), d, j.dir)
		}
		j.dir.release()
		return nil
	}
	dir, err := openDir(w.Root, j.rel)
	if err != nil {
		return nil
	}
	defer dir.release()
	entries, _ := dir.f.ReadDir(-1) // a partial listing is still worth walking
	stack := j.stack
	if w.Gitignore {
		for _, d := range entries {
			if d.Name() == ".gitignore" {
				if rules, ok := w.readIgnore(joinRel(j.rel, d.Name()), d.Type()); ok {
					stack = stack.push(j.rel, rules)
				}
				break
			}
		}
	}
	var more []walkJob
	var files []fs.DirEntry
	for _, d := range entries {
		name := d.Name()
		if name == ".git" {
			continue
		}
		rel := joinRel(j.rel, name)
		isDir := d.IsDir()
		if stack != nil && stack.ignored(rel, isDir) {
			continue
		}
		if !isDir {
			files = append(files, d)
			continue
		}
		w.Visit(rel, d, dir)
		if w.EnterDir == nil || w.EnterDir(rel) {
			more = append(more, walkJob{rel: rel, stack: stack})
		}
	}
	for len(files) > fileBatch {
		dir.refs.Add(1)
		more = append(more, walkJob{rel: j.rel, files: files[len(files)-fileBatch:], dir: dir})
		files = files[:len(files)-fileBatch]
	}
	for _, d := range files {
		w.Visit(joinRel(j.rel, d.Name()), d, dir)
	}
	return more
}

// ancestorIgnores reads the .gitignore files of Root and of every
// directory between it and Start (Start's own is read when it is listed),
// and .git/info/exclude at Root.
func (w *Walker) ancestorIgnores() *ignoreStack {
	var s *ignoreStack
	if rules, ok := w.readIgnore(".git/info/exclude", 0); ok {
		s = s.push("", rules)
	}
	if w.Start == "" {
		return s
	}
	dir := ""
	for _, elem := range strings.Split(w.Start, "/") {
		if rules, ok := w.readIgnore(joinRel(dir, ".gitignore"), 0); ok {
			s = s.push(dir, rules)
		}
		dir = joinRel(dir, elem)
	}
	return s
}

// osRel is the slash path rel below a root as the os.Root methods take it.
func osRel(rel string) string {
	if rel == "" {
		return "."
	}
	return filepath.FromSlash(rel)
}

func joinRel(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}
