// series.go: the counters, gauges and histograms, lock-free on the path
// that feeds them, and how each writes itself in the text format.

package metrics

import (
	"math"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
)

// family is one metric family of the exposition: its HELP and TYPE lines
// and its samples.
type family interface {
	familyName() string
	write(w *writer)
}

// meta names a family.
type meta struct{ name, help, typ string }

func (m *meta) familyName() string { return m.name }

// counter counts up by whole numbers: everything dshd counts is a number
// of things, so a plain atomic add is the whole cost of a count.
type counter struct{ n atomic.Uint64 }

func (c *counter) inc()          { c.n.Add(1) }
func (c *counter) add(n uint64)  { c.n.Add(n) }
func (c *counter) value() uint64 { return c.n.Load() }

// gauge goes up and down by whole numbers.
type gauge struct{ n atomic.Int64 }

func (g *gauge) inc() { g.n.Add(1) }
func (g *gauge) dec() { g.n.Add(-1) }

// scalar is a family of one unlabelled counter.
type scalar struct {
	meta
	counter
}

func (s *scalar) write(w *writer) {
	w.head(&s.meta)
	w.uint(s.name, s.value())
}

// vec is a family of series told apart by one label. A series is made on
// first use and lives as long as the family; its label values are dshd's
// own words (a stop reason, a transport), so they are few.
type vec[T counter | gauge] struct {
	meta
	label  string
	series sync.Map // label value -> *T
}

func newVec[T counter | gauge](name, help, typ, label string) *vec[T] {
	return &vec[T]{meta: meta{name, help, typ}, label: label}
}

// with returns the series for value; after its first use that is one
// lock-free map read.
func (v *vec[T]) with(value string) *T {
	if s, ok := v.series.Load(value); ok {
		return s.(*T)
	}
	s, _ := v.series.LoadOrStore(value, new(T))
	return s.(*T)
}

// write writes the series in the order of their label values; a family
// with no series yet writes nothing, as no sample has a value to show.
func (v *vec[T]) write(w *writer) {
	var values []string
	v.series.Range(func(k, _ any) bool {
		values = append(values, k.(string))
		return true
	})
	if len(values) == 0 {
		return
	}
	slices.Sort(values)
	w.head(&v.meta)
	for _, value := range values {
		s, _ := v.series.Load(value)
		switch s := any(s.(*T)).(type) {
		case *counter:
			w.uint(v.name, s.value(), v.label, value)
		case *gauge:
			w.int(v.name, s.n.Load(), v.label, value)
		}
	}
}

// gaugeFunc is a gauge whose value is read at each scrape.
type gaugeFunc struct {
	meta
	value func() float64
}

func (g *gaugeFunc) write(w *writer) {
	w.head(&g.meta)
	w.float(g.name, g.value())
}

// histogram counts observations into buckets. Each observation adds to
// one bucket (not to all the buckets above it) and to the sum, with
// atomics; a scrape makes the buckets cumulative and takes _count from
// them, so the buckets and the count always agree, while the sum may
// miss an observation that is being added as the scrape reads.
type histogram struct {
	meta
	upper  []float64       // upper bounds, ascending; +Inf is implicit
	counts []atomic.Uint64 // per bucket, len(upper)+1, not cumulative
	sum    atomic.Uint64   // float64 bits
}

func newHistogram(name, help string, upper []float64) *histogram {
	return &histogram{meta: meta{name, help, "histogram"}, upper: upper, counts: make([]atomic.Uint64, len(upper)+1)}
}

func (h *histogram) observe(v float64) {
	// The first bound at or above v is v's bucket (le is inclusive); past
	// the last bound it is +Inf.
	h.counts[sort.SearchFloat64s(h.upper, v)].Add(1)
	for {
		old := h.sum.Load()
		if h.sum.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

func (h *histogram) write(w *writer) {
	w.head(&h.meta)
	var cum uint64
	for i := range h.counts {
		cum += h.counts[i].Load()
		le := "+Inf"
		if i < len(h.upper) {
			le = formatFloat(h.upper[i])
		}
		w.uint(h.name+"_bucket", cum, "le", le)
	}
	w.float(h.name+"_sum", math.Float64frombits(h.sum.Load()))
	w.uint(h.name+"_count", cum)
}

// exponentialBuckets returns n upper bounds from start, each factor times
// the one before.
func exponentialBuckets(start, factor float64, n int) []float64 {
	b := make([]float64, n)
	for i := range b {
		b[i] = start
		start *= factor
	}
	return b
}
