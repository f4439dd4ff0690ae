// This file walks directory trees in parallel for glob and grep, skipping
// .git and what .gitignore files exclude, and keeps the first results in
// path order without holding the rest.

package tools

import (
	"container/heap"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// walker walks the tree below base/start. Paths it reports are
// slash-separated and relative to base. Symlinks are reported, never
// followed, so a walk cannot leave the directory it started in.
type walker struct {
	base  string // absolute directory the relative paths start from
	start string // relative directory to walk; "" for base
	// gitignore makes the walk skip what .gitignore files exclude, reading
	// those between base and start first.
	gitignore bool
	workers   int
	// enterDir, when set, is asked before a directory is read; false skips
	// it and everything below.
	enterDir func(rel string) bool
	// visit is called for every entry that is not ignored, directories
	// included, from several goroutines at once.
	visit func(rel string, d fs.DirEntry)
}

// walkJob is a directory to read, or a batch of its files to visit.
type walkJob struct {
	rel   string
	stack *ignoreStack
	files []fs.DirEntry
}

// fileBatch is how many files of one directory a worker visits before it
// hands the rest to other workers, so one huge directory is shared out.
const fileBatch = 64

// run walks until done or ctx ends; it returns ctx's error in that case.
func (w *walker) run(ctx context.Context) error {
	workers := w.workers
	if workers <= 0 {
		workers = min(max(4, 2*runtime.GOMAXPROCS(0)), 32)
	}
	var stack *ignoreStack
	if w.gitignore {
		stack = w.ancestorIgnores()
	}
	var (
		mu     sync.Mutex
		cond   = sync.NewCond(&mu)
		queue  = []walkJob{{rel: w.start, stack: stack}}
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
func (w *walker) do(j walkJob) []walkJob {
	if j.files != nil {
		for _, d := range j.files {
			w.visit(joinRel(j.rel, d.Name()), d)
		}
		return nil
	}
	f, err := os.Open(w.abs(j.rel))
	if err != nil {
		return nil
	}
	entries, _ := f.ReadDir(-1) // a partial listing is still worth walking
	f.Close()
	stack := j.stack
	if w.gitignore {
		for _, d := range entries {
			if d.Name() == ".gitignore" && d.Type().IsRegular() {
				if b, err := os.ReadFile(w.abs(joinRel(j.rel, ".gitignore"))); err == nil {
					stack = stack.push(j.rel, parseGitignore(string(b)))
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
		w.visit(rel, d)
		if w.enterDir == nil || w.enterDir(rel) {
			more = append(more, walkJob{rel: rel, stack: stack})
		}
	}
	for len(files) > fileBatch {
		more = append(more, walkJob{rel: j.rel, files: files[len(files)-fileBatch:]})
		files = files[:len(files)-fileBatch]
	}
	for _, d := range files {
		w.visit(joinRel(j.rel, d.Name()), d)
	}
	return more
}

// ancestorIgnores reads the .gitignore files of base and of every
// directory between it and start (start's own is read when it is
// listed), and .git/info/exclude at base.
func (w *walker) ancestorIgnores() *ignoreStack {
	var s *ignoreStack
	if b, err := os.ReadFile(filepath.Join(w.base, ".git", "info", "exclude")); err == nil {
		s = s.push("", parseGitignore(string(b)))
	}
	if w.start == "" {
		return s
	}
	dir := ""
	for _, elem := range strings.Split(w.start, "/") {
		if b, err := os.ReadFile(filepath.Join(w.abs(dir), ".gitignore")); err == nil {
			s = s.push(dir, parseGitignore(string(b)))
		}
		dir = joinRel(dir, elem)
	}
	return s
}

func (w *walker) abs(rel string) string {
	if rel == "" {
		return w.base
	}
	return filepath.Join(w.base, filepath.FromSlash(rel))
}

func joinRel(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// firstK keeps the items with the smallest keys whose weights add up to at
// least k, dropping the rest as they come; it is safe for concurrent use.
// Keys are relative paths, so a directory whose path sorts after every
// kept key can be skipped whole once the set is full.
type firstK[T any] struct {
	k int

	mu      sync.Mutex
	h       keyHeap[T] // max-heap on key; guarded by mu
	total   int        // sum of the weights in h; guarded by mu
	dropped bool       // guarded by mu
}

func newFirstK[T any](k int) *firstK[T] { return &firstK[T]{k: max(k, 1)} }

// wants reports whether an item with key could still be kept.
func (f *firstK[T]) wants(key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.total < f.k || key < f.h[0].key
}

// wantsDir reports whether anything below the directory rel could still be
// kept: every path below it sorts at or after rel + "/".
func (f *firstK[T]) wantsDir(rel string) bool { return f.wants(rel + "/") }

func (f *firstK[T]) add(key string, weight int, v T) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.total >= f.k && key > f.h[0].key {
		f.dropped = true
		return
	}
	heap.Push(&f.h, keyed[T]{key, weight, v})
	f.total += weight
	for len(f.h) > 1 && f.total-f.h[0].weight >= f.k {
		f.total -= heap.Pop(&f.h).(keyed[T]).weight
		f.dropped = true
	}
}

// sorted returns the kept items in key order, and whether more may exist:
// an item was dropped, or the set filled up (so the walk may have skipped
// some without looking).
func (f *firstK[T]) sorted() ([]keyed[T], bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]keyed[T], len(f.h))
	copy(out, f.h)
	slicesSortKeyed(out)
	return out, f.dropped || f.total >= f.k
}

type keyed[T any] struct {
	key    string
	weight int
	v      T
}

type keyHeap[T any] []keyed[T]

func (h keyHeap[T]) Len() int           { return len(h) }
func (h keyHeap[T]) Less(i, j int) bool { return h[i].key > h[j].key }
func (h keyHeap[T]) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *keyHeap[T]) Push(x any)        { *h = append(*h, x.(keyed[T])) }
func (h *keyHeap[T]) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func slicesSortKeyed[T any](s []keyed[T]) {
	slices.SortFunc(s, func(a, b keyed[T]) int { return strings.Compare(a.key, b.key) })
}
