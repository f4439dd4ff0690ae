// This file implements the Service: the provider registry, the start-time
// checks, and the run wrapper that reports start and end to observers.

package subagents

import (
	"cmp"
	"context"
	"log/slog"
	"sync"
)

// ServiceOptions configure a [Service]. The zero value is usable.
type ServiceOptions struct {
	// Logger receives notes (a panicking observer); nil discards them.
	Logger *slog.Logger
}

// Service is the registry of subagent providers and the one place runs are
// started. Several providers coexist, each under a unique name; a caller
// picks one by name. A Service is safe for concurrent use.
type Service struct {
	log *slog.Logger

	mu        sync.Mutex
	providers []*providerEntry // insertion order; guarded by mu
	observers []*observer      // guarded by mu
}

// providerEntry is one RegisterProvider call, compared by identity so a
// stale disposer never removes a later provider of the same name.
type providerEntry struct {
	name string
	p    Provider
}

// NewService returns an empty service. opts may be nil.
func NewService(opts *ServiceOptions) *Service {
	var o ServiceOptions
	if opts != nil {
		o = *opts
	}
	return &Service{log: cmp.Or(o.Logger, slog.New(slog.DiscardHandler))}
}

// RegisterProvider registers p under p.Name(). A name already taken fails
// with [ErrDuplicateProvider]. dispose unregisters it; it is idempotent.
// Registering and unregistering are announced to observers as
// [EventProviderAdded] and [EventProviderRemoved].
func (s *Service) RegisterProvider(p Provider) (dispose func(), err error) {
	if p == nil {
		return nil, errorf(CodeInvalidRequest, "nil provider")
	}
	name := p.Name()
	if name == "" {
		return nil, errorf(CodeInvalidRequest, "a provider needs a name")
	}
	e := &providerEntry{name: name, p: p}
	s.mu.Lock()
	for _, have := range s.providers {
		if have.name == name {
			s.mu.Unlock()
			return nil, errorf(CodeDuplicateProvider, "a provider named %q is already registered", name)
		}
	}
	s.providers = append(s.providers, e)
	s.publishLocked(Event{Kind: EventProviderAdded, Provider: name})
	s.mu.Unlock()

	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			for i, have := range s.providers {
				if have == e {
					s.providers = append(s.providers[:i:i], s.providers[i+1:]...)
					s.publishLocked(Event{Kind: EventProviderRemoved, Provider: name})
					return
				}
			}
		})
	}, nil
}

// Provider returns the provider registered under name.
func (s *Service) Provider(name string) (Provider, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.providers {
		if e.name == name {
			return e.p, true
		}
	}
	return nil, false
}

// List returns the registered provider names in insertion order.
func (s *Service) List() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, len(s.providers))
	for i, e := range s.providers {
		names[i] = e.name
	}
	return names
}

// Observe subscribes fn to the service's events — to those of the given
// kinds, or to all when none are given — and returns the function that
// unsubscribes it.
//
// Delivery is detached: each observer has its own queue drained by its own
// goroutine, in event order, so no observer can block a run, its caller or
// another observer. Nothing is dropped while subscribed (an end event
// always arrives). A panicking observer is contained and logged. Each
// observer gets its own copy of Event.LastMessage. An observer of start
// events keeps each in-process child in the agent registry until it has
// seen the child's start (see the package doc), so one that only needs
// some kinds should name them.
func (s *Service) Observe(fn func(Event), kinds ...EventKind) (stop func()) {
	o := &observer{fn: fn, log: s.log, kinds: kinds}
	s.mu.Lock()
	s.observers = append(s.observers, o)
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			o.stop()
			s.mu.Lock()
			defer s.mu.Unlock()
			for i, have := range s.observers {
				if have == o {
					s.observers = append(s.observers[:i:i], s.observers[i+1:]...)
					return
				}
			}
		})
	}
}

func (s *Service) publish(ev Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.publishLocked(ev)
}

// publishLocked queues ev for every observer. Holding mu keeps the order
// of provider events equal to the order of the registry changes.
func (s *Service) publishLocked(ev Event) {
	for _, o := range s.observers {
		if o.wants(ev.Kind) {
			o.push(forObserver(ev))
		}
	}
}

// Start starts a run on the provider called name. In order, before any
// child exists: the provider must exist ([ErrNoProvider]); every
// start-time capability the request uses must be declared
// ([ErrUnsupportedCapability], naming the first unmet one); the request
// needs a Parent ([ErrInvalidRequest]); and the child must fit the depth
// limit ([ErrDepthLimit], naming the child's depth and the limit). Then
// the provider starts the run. A failed Start leaves nothing behind and
// announces nothing; a successful one is announced as [EventStart], and
// the run's settling as [EventEnd].
func (s *Service) Start(ctx context.Context, name string, req StartRequest) (Run, error) {
	p, err := s.lookup(name)
	if err != nil {
		return nil, err
	}
	if err := checkRequest(p, req, "start"); err != nil {
		return nil, err
	}
	run, err := p.Start(ctx, req)
	if err != nil {
		return nil, err
	}
	if run == nil {
		return nil, errorf(CodeInvalidRequest, "provider %q returned no run", name)
	}
	return s.track(run, name, req.Parent.SessionID), nil
}

// lookup is the provider called name, or [ErrNoProvider].
func (s *Service) lookup(name string) (Provider, error) {
	p, ok := s.Provider(name)
	if !ok {
		return nil, errorf(CodeNoProvider, "no provider named %q", name)
	}
	return p, nil
}

// checkRequest runs the checks a start or restore request (kind) passes
// on p before any child exists, in order: its start-time capabilities,
// its parent, its depth.
func checkRequest(p Provider, req StartRequest, kind string) error {
	if err := CheckCapabilities(p, req); err != nil {
		return err
	}
	if req.Parent == nil {
		return errorf(CodeInvalidRequest, "a %s request needs a parent scope", kind)
	}
	return CheckDepth(req)
}

// AdmitChild is what a provider's own Start checks once req has a parent:
// the start-time capabilities p declares ([CheckCapabilities]), then the
// depth limit ([CheckDepth]). It returns the child's depth and its
// subtree's limit ([ChildLimits]).
func AdmitChild(p Provider, req StartRequest) (depth, subtreeLimit int, err error) {
	if err := CheckCapabilities(p, req); err != nil {
		return 0, 0, err
	}
	if err := CheckDepth(req); err != nil {
		return 0, 0, err
	}
	depth, subtreeLimit = ChildLimits(req)
	return depth, subtreeLimit, nil
}

// CheckCapabilities returns [ErrUnsupportedCapability] naming p and the
// first start-time capability req uses that p does not declare.
func CheckCapabilities(p Provider, req StartRequest) error {
	caps := p.Capabilities()
	missing := ""
	switch {
	case len(req.OutputSchema) > 0 && !caps.OutputSchema:
		missing = "outputSchema"
	case req.DepthLimit != nil && !caps.DepthLimit:
		missing = "depthLimit"
	case req.ToolFilter != nil && !caps.ToolFilter:
		missing = "toolFilter"
	default:
		return nil
	}
	return errorf(CodeUnsupportedCapability, "provider %q does not support %s", p.Name(), missing)
}

// ChildLimits returns the depth of the child req would create and the
// depth limit for that child's own subtree. The limit in force for the
// child is the parent's MaxDepth ([DefaultMaxDepth] when zero); the
// request's DepthLimit, when set, lowers the subtree's limit to
// depth+DepthLimit (so 0 forbids any delegation below the child). Ancestors'
// DepthLimits reach the child through the parent's MaxDepth, which a
// provider sets from this function.
func ChildLimits(req StartRequest) (depth, subtreeLimit int) {
	limit := DefaultMaxDepth
	if req.Parent != nil {
		depth = req.Parent.Depth + 1
		if req.Parent.MaxDepth > 0 {
			limit = req.Parent.MaxDepth
		}
	} else {
		depth = 1
	}
	subtreeLimit = limit
	if req.DepthLimit != nil {
		d := max(*req.DepthLimit, 0)
		subtreeLimit = min(subtreeLimit, depth+d)
	}
	return depth, subtreeLimit
}

// CheckDepth returns [ErrDepthLimit] when the child req would create is
// deeper than the limit in force, naming both numbers.
func CheckDepth(req StartRequest) error {
	limit := DefaultMaxDepth
	if req.Parent != nil && req.Parent.MaxDepth > 0 {
		limit = req.Parent.MaxDepth
	}
	depth, _ := ChildLimits(req)
	if depth > limit {
		return errorf(CodeDepthLimit, "a subagent here would be at depth %d, beyond the depth limit of %d", depth, limit)
	}
	return nil
}
