// This file keeps the definitions' tools of each workspace in step with
// the files: one tool layer per workspace, shared by its sessions.

package definition

import (
	"cmp"
	"log/slog"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/dshd/dshd/internal/mdfiles"
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/subagent"
)

// Options configure a [Library].
type Options struct {
	// Service holds the providers; required.
	Service *subagents.Service
	// Base is the daemon's tool layer (built-ins and bindings); each
	// workspace's layer sits on it. Required.
	Base *tools.Registry
	// User are the user's sources (see [UserSources]); they are read for
	// every workspace, after its own.
	User []Source
	// Models lists the models the backend serves (see [Env]).
	Models func() []string
	// MaxFileBytes is the largest definition file read, and the largest
	// schema file one names (0: [DefaultMaxFileBytes]); a larger one is a
	// mistake naming the file and the setting (a system prompt is not a
	// data file). Settings names it.
	MaxFileBytes int64
	// MaxFiles is how many definition files are read from a workspace's
	// directories together, .dshd/agents first, each by name, and apart
	// from them from the user's (0: [DefaultMaxFiles]): the user's have a
	// count of their own, which a repository cannot use up. The files
	// past it are neither stat'ed nor read, and each directory holding
	// some is a mistake naming it, its count and the setting.
	MaxFiles int
	// Settings names MaxFileBytes and MaxFiles where a hit is said.
	Settings Settings
	// Logger receives the mistakes in the user's definitions and the
	// tools' lifecycle; nil discards them.
	Logger *slog.Logger
}

// Library hands out each workspace's definitions' tools. It is safe for
// concurrent use.
type Library struct {
	o      Options
	log    *slog.Logger
	bounds bounds // o.MaxFileBytes' and o.MaxFiles'

	mu         sync.Mutex
	workspaces map[string]*Workspace // by cwd; guarded by mu
	userErrs   []string              // the user mistakes last logged; guarded by mu
}

// New returns a library. It reads nothing until asked.
func New(o Options) *Library {
	o.User = slices.Clone(o.User)
	return &Library{o: o, log: cmp.Or(o.Logger, slog.New(slog.DiscardHandler)), bounds: boundsOf(o.MaxFileBytes, o.MaxFiles, o.Settings), workspaces: make(map[string]*Workspace)}
}

// CheckUser reads and checks the user's definitions and logs each
// mistake; the daemon calls it at start so they are reported there. It
// returns the mistakes.
func (l *Library) CheckUser() []*Error {
	now := time.Now()
	found := scan(l.o.User, l.bounds)
	c := cache{bounds: l.bounds}
	got := c.load(found.stamps, found.from, now)
	_, cerr := CheckAll(got.defs, l.env())
	errs := slices.Concat(found.mistakes(), got.errs, cerr)
	l.logUser(errs)
	return errs
}

func (l *Library) env() Env {
	return Env{Service: l.o.Service, Tools: l.o.Base.Names(), Models: l.o.Models}
}

// logUser logs the user's mistakes when they differ from those last
// logged, so each is logged once, when it appears.
func (l *Library) logUser(errs []*Error) {
	var msgs []string
	for _, e := range errs {
		if e.scope != ScopeWorkspace {
			msgs = append(msgs, e.Error())
		}
	}
	l.mu.Lock()
	same := slices.Equal(msgs, l.userErrs)
	l.userErrs = msgs
	l.mu.Unlock()
	if same {
		return
	}
	for _, m := range msgs {
		l.log.Warn("agent definition rejected", "err", m)
	}
}

// Open returns the workspace of cwd brought up to date with its files,
// and the mistakes in its own definitions (the user's are logged). The
// caller must call Close when its session ends.
func (l *Library) Open(cwd string) (*Workspace, []*Error) {
	cwd = filepath.Clean(cwd)
	l.mu.Lock()
	w, ok := l.workspaces[cwd]
	if !ok {
		w = &Workspace{lib: l, cwd: cwd, layer: tools.NewRegistry(l.o.Base), cache: cache{bounds: l.bounds}, bound: make(map[string]*bound)}
		l.workspaces[cwd] = w
	}
	w.refs++
	l.mu.Unlock()
	_, errs := w.Refresh()
	return w, errs
}

// Workspace is the definitions of one workspace (and the user's) as
// tools, in a layer over the daemon's.
type Workspace struct {
	lib   *Library
	cwd   string
	layer *tools.Registry
	refs  int // guarded by lib.mu

	mu     sync.Mutex
	cache  cache           // guarded by mu
	loaded bool            // the files were read once; guarded by mu
	stamps []mdfiles.Stamp // the files last read; guarded by mu
	over   []overflow      // the directories over their count then; guarded by mu
	// settled: every stamp was Settle old when read, so an unchanged
	// stamp means an unchanged file; otherwise the newer files are read
	// again (a same-size rewrite within one clock tick keeps its stamp).
	settled bool              // guarded by mu
	errs    []*Error          // their mistakes; guarded by mu
	bound   map[string]*bound // by tool name; guarded by mu
	order   []*Definition     // the bound definitions, in load order; guarded by mu
	closed  bool              // guarded by mu
}

type bound struct {
	def     *Definition
	dispose func()
}

// Tools returns the workspace's layer: the daemon's tools and the
// definitions' tools. A session's own layer goes on top of it.
func (w *Workspace) Tools() *tools.Registry { return w.layer }

// Definitions returns the definitions whose tools are bound, in the
// order they were read.
func (w *Workspace) Definitions() []*Definition {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.order)
}

// Refresh reads the workspace's and the user's definition files again
// and, when any changed, was added or was deleted, registers, re-derives
// or unregisters their tools. It reports whether anything changed and
// returns the mistakes in the workspace's own definitions. A file whose
// stamp is unchanged is not read again once the stamp is
// [mdfiles.Settle] old; a newer one is read, and parsed only when its
// text differs.
func (w *Workspace) Refresh() (changed bool, errs []*Error) {
	l := w.lib
	sources := append(WorkspaceSources(w.cwd), l.o.User...)
	now := time.Now() // before the stats: a change during them is too new to trust
	found := scan(sources, l.bounds)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return false, nil
	}
	// A file added or removed past a count changes no stamp, only the
	// count's mistake.
	same := w.loaded && slices.Equal(found.stamps, w.stamps) && slices.Equal(found.over, w.over) && len(found.errs) == 0 && !w.cache.schemasMoved()
	if same && w.settled {
		return false, workspaceOnly(w.errs)
	}
	got := w.cache.load(found.stamps, found.from, now)
	w.settled = got.settled
	if same && !got.fresh {
		return false, workspaceOnly(w.errs)
	}
	ok, cerr := CheckAll(got.defs, l.env())
	all := slices.Concat(found.mistakes(), got.errs, cerr)
	ok, berr := w.bind(ok)
	all = append(all, berr...)
	changed = w.loaded
	w.loaded, w.stamps, w.over, w.errs, w.order = true, found.stamps, found.over, all, ok
	l.logUser(all)
	return changed, workspaceOnly(all)
}

// bind makes the layer's tools match defs: an unchanged definition keeps
// its tool, a changed one is bound again, a gone one is disposed.
func (w *Workspace) bind(defs []*Definition) ([]*Definition, []*Error) {
	l := w.lib
	keep := make(map[string]bool, len(defs))
	for _, d := range defs {
		keep[d.Name()] = true
	}
	for name, b := range w.bound {
		if !keep[name] {
			b.dispose()
			delete(w.bound, name)
		}
	}
	var ok []*Definition
	var errs []*Error
	for _, d := range defs {
		if b, have := w.bound[d.Name()]; have {
			if reflect.DeepEqual(b.def.Binding, d.Binding) {
				b.def = d
				ok = append(ok, d)
				continue
			}
			b.dispose()
			delete(w.bound, d.Name())
		}
		dispose, err := subagent.Bind(l.o.Service, w.layer, d.Binding, &subagent.BindOptions{Logger: l.log})
		if err != nil {
			errs = append(errs, &Error{File: d.File, Err: err, scope: d.Scope})
			continue
		}
		w.bound[d.Name()] = &bound{def: d, dispose: dispose}
		ok = append(ok, d)
	}
	return ok, errs
}

// Close releases the caller's hold; the last one unbinds the tools.
func (w *Workspace) Close() {
	l := w.lib
	l.mu.Lock()
	w.refs--
	last := w.refs == 0
	if last {
		delete(l.workspaces, w.cwd)
	}
	l.mu.Unlock()
	if !last {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	for name, b := range w.bound {
		b.dispose()
		delete(w.bound, name)
	}
}

// workspaceOnly keeps the mistakes of workspace definitions.
func workspaceOnly(errs []*Error) []*Error {
	var out []*Error
	for _, e := range errs {
		if e.scope == ScopeWorkspace {
			out = append(out, e)
		}
	}
	return out
}
