// This file keeps the first results of a walk in path order without
// holding the rest.

package search

import (
	"container/heap"
	"slices"
	"strings"
	"sync"
)

// FirstK keeps the items with the smallest keys whose weights add up to at
// least k, dropping the rest as they come; it is safe for concurrent use.
// Keys are relative paths, so a directory whose path sorts after every
// kept key can be skipped whole once the set is full.
type FirstK[T any] struct {
	k int

	mu      sync.Mutex
	h       keyHeap[T] // max-heap on key; guarded by mu
	total   int        // sum of the weights in h; guarded by mu
	dropped bool       // guarded by mu
}

// NewFirstK returns a FirstK that keeps at least k weight (at least 1).
func NewFirstK[T any](k int) *FirstK[T] { return &FirstK[T]{k: max(k, 1)} }

// Wants reports whether an item with key could still be kept.
func (f *FirstK[T]) Wants(key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.total < f.k || key < f.h[0].Key
}

// WantsDir reports whether anything below the directory rel could still be
// kept: every path below it sorts at or after rel + "/".
func (f *FirstK[T]) WantsDir(rel string) bool { return f.Wants(rel + "/") }

// Add offers an item; it is dropped at once when k weight with smaller
// keys is already kept.
func (f *FirstK[T]) Add(key string, weight int, v T) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.total >= f.k && key > f.h[0].Key {
		f.dropped = true
		return
	}
	heap.Push(&f.h, Keyed[T]{key, weight, v})
	f.total += weight
	for len(f.h) > 1 && f.total-f.h[0].Weight >= f.k {
		f.total -= heap.Pop(&f.h).(Keyed[T]).Weight
		f.dropped = true
	}
}

// Sorted returns the kept items in key order, and whether more may exist:
// an item was dropped, or the set filled up (so the walk may have skipped
// some without looking).
func (f *FirstK[T]) Sorted() ([]Keyed[T], bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Keyed[T], len(f.h))
	copy(out, f.h)
	slicesSortKeyed(out)
	return out, f.dropped || f.total >= f.k
}

// Keyed is one kept item.
type Keyed[T any] struct {
	Key    string
	Weight int
	V      T
}

type keyHeap[T any] []Keyed[T]

func (h keyHeap[T]) Len() int           { return len(h) }
func (h keyHeap[T]) Less(i, j int) bool { return h[i].Key > h[j].Key }
func (h keyHeap[T]) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *keyHeap[T]) Push(x any)        { *h = append(*h, x.(Keyed[T])) }
func (h *keyHeap[T]) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func slicesSortKeyed[T any](s []Keyed[T]) {
	slices.SortFunc(s, func(a, b Keyed[T]) int { return strings.Compare(a.Key, b.Key) })
}
