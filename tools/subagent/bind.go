// This file implements Bind: the tool follows its provider's lifecycle in
// the service.

package subagent

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dshd/dshd/internal/outputschema"
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/tools"
)

// ErrDuplicateBinding is returned by Bind for a tool name already bound, or
// already used by another tool, in the registry.
var ErrDuplicateBinding = errors.New("subagent: tool name already bound")

// BindOptions are optional settings of [Bind].
type BindOptions struct {
	// Logger receives the notes on the tool's lifecycle (waiting for the
	// provider, registered, removed); nil discards them.
	Logger *slog.Logger
	// OnChange, when set, is called each time the tool appears (true) or
	// disappears (false). It runs with the binding's lock held and must not
	// call back into the binding.
	OnChange func(registered bool)
}

// claims are the tool names bound per registry. A binding claims its name
// at Bind even while its provider is absent (and the tool does not exist
// yet), so a second binding of the same name is rejected at once rather
// than when the provider comes.
var claims = struct {
	sync.Mutex
	m map[claimKey]bool
}{m: make(map[claimKey]bool)}

type claimKey struct {
	reg  *tools.Registry
	name string
}

// Bind makes b's tool exist in reg exactly while b.Provider is
// registered in svc, whatever the order: it registers at once when the
// provider is there, or when it arrives, and unregisters when it leaves.
// A provider registered again gets its wording derived again. While the
// provider is absent the tool does not exist and a note is logged. A tool
// name already bound (or used) in reg fails with [ErrDuplicateBinding].
// opts may be nil. dispose removes the tool and the binding; it is
// idempotent.
func Bind(svc *subagents.Service, reg *tools.Registry, b Binding, opts *BindOptions) (dispose func(), err error) {
	if svc == nil || reg == nil {
		return nil, errors.New("subagent: Bind needs a service and a registry")
	}
	b, err = b.normalized()
	if err != nil {
		return nil, err
	}
	var o BindOptions
	if opts != nil {
		o = *opts
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	key := claimKey{reg: reg, name: b.ToolName}
	claims.Lock()
	if claims.m[key] {
		claims.Unlock()
		return nil, fmt.Errorf("%w: a subagent binding already uses the tool name %q", ErrDuplicateBinding, b.ToolName)
	}
	if _, taken := reg.Get(b.ToolName); taken {
		claims.Unlock()
		return nil, fmt.Errorf("%w: a tool named %q already exists", ErrDuplicateBinding, b.ToolName)
	}
	claims.m[key] = true
	claims.Unlock()

	bn := &binder{svc: svc, reg: reg, b: b, log: log.With("tool", b.ToolName, "provider", b.Provider), onChange: o.OnChange}
	bn.schema = compiledOnce(b.OutputSchema)
	bn.stopObserving = svc.Observe(func(ev subagents.Event) {
		if ev.Provider != b.Provider {
			return
		}
		switch ev.Kind {
		case subagents.EventProviderAdded:
			bn.sync(true)
		case subagents.EventProviderRemoved:
			bn.sync(false)
		}
	}, subagents.EventProviderAdded, subagents.EventProviderRemoved)
	bn.sync(false)
	var once sync.Once
	return func() {
		once.Do(func() {
			bn.stopObserving()
			bn.close()
			claims.Lock()
			delete(claims.m, key)
			claims.Unlock()
		})
	}, nil
}

// binder keeps one binding's tool in step with its provider.
type binder struct {
	svc           *subagents.Service
	reg           *tools.Registry
	b             Binding
	log           *slog.Logger
	onChange      func(bool)
	stopObserving func()
	schema        func() *jsonschema.Resolved // b's output schema, see compiledOnce

	mu         sync.Mutex
	unregister func() // nil while the tool does not exist; guarded by mu
	inherit    bool   // the registered tool's wording; guarded by mu
	waiting    bool   // the absence was logged; guarded by mu
	closed     bool   // guarded by mu
}

// sync makes the tool match the service's current state. Provider events
// arrive detached and possibly late, so sync reads the truth instead of
// trusting the event; fresh re-registers even an unchanged wording,
// because the provider behind the name is new.
func (bn *binder) sync(fresh bool) {
	bn.mu.Lock()
	defer bn.mu.Unlock()
	if bn.closed {
		return
	}
	p, ok := bn.svc.Provider(bn.b.Provider)
	if !ok {
		if bn.unregister != nil {
			bn.unregister()
			bn.unregister = nil
			bn.log.Info("subagent tool removed: its provider went away")
			bn.changed(false)
		}
		if !bn.waiting {
			bn.waiting = true
			bn.log.Info("subagent tool waiting for its provider to be registered")
		}
		return
	}
	inherit := p.InheritsParentContext()
	if bn.unregister != nil {
		if !fresh && inherit == bn.inherit {
			return
		}
		bn.unregister()
		bn.unregister = nil
	}
	t := &tool{svc: bn.svc, b: bn.b, schema: bn.schema, inherit: inherit, description: describe(bn.b.Description, inherit)}
	unregister, err := bn.reg.Register(t)
	if err != nil {
		bn.log.Error("subagent tool could not be registered", "err", err)
		bn.changed(false)
		return
	}
	bn.unregister, bn.inherit, bn.waiting = unregister, inherit, false
	bn.log.Debug("subagent tool registered", "inherits_context", inherit)
	bn.changed(true)
}

// compiledOnce returns raw compiled at its first call, and held from then
// on by whoever keeps the function (the binding and its tools):
// outputschema keeps a compiled schema only while someone holds it, so
// every later start of the binding's children finds it compiled. The
// first call, not Bind, compiles: a definition's schema was compiled to
// check it, and holding it from then on would keep every definition's
// schema live while a workspace's files are read (more for the collector
// to mark) for tools that may never be called. Nil for a binding without
// a schema, or with one that does not compile (Check or Start reports it).
func compiledOnce(raw json.RawMessage) func() *jsonschema.Resolved {
	return sync.OnceValue(func() *jsonschema.Resolved {
		if len(raw) == 0 {
			return nil
		}
		r, _ := outputschema.Compile(raw)
		return r
	})
}

func (bn *binder) changed(registered bool) {
	if bn.onChange != nil {
		bn.onChange(registered)
	}
}

func (bn *binder) close() {
	bn.mu.Lock()
	defer bn.mu.Unlock()
	bn.closed = true
	if bn.unregister != nil {
		bn.unregister()
		bn.unregister = nil
	}
}

// wordings are the two wordings (fresh context, inherited), derived on
// first use: encoding the schemas in package init or at registration
// would cost every dshd's cold start.
var wordings = sync.OnceValue(func() [2]wording { return [2]wording{wordingFor(false), wordingFor(true)} })

func boolIndex(b bool) int {
	if b {
		return 1
	}
	return 0
}
