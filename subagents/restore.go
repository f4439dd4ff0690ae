// This file implements restoring a child from a snapshot through the
// Service, and reaching a run's snapshot through the Service's wrappers.

package subagents

import (
	"context"
	"encoding/json"
)

// Restore rebuilds a child from a snapshot ([Durable]) on the provider
// called name, which must be a [Restorer] (else [ErrUnsupportedCapability]
// naming it), under the checks of Start. The run returned has ended, is
// not announced, and is Resumable exactly when the provider's is; each run
// resumed from it is tracked like a started one (start and end events).
func (s *Service) Restore(ctx context.Context, name string, req StartRequest, snapshot json.RawMessage) (Run, error) {
	p, err := s.lookup(name)
	if err != nil {
		return nil, err
	}
	r, ok := p.(Restorer)
	if !ok {
		return nil, errorf(CodeUnsupportedCapability, "the %s provider cannot restore a child", name)
	}
	if err := checkRequest(p, req, "restore"); err != nil {
		return nil, err
	}
	run, err := r.Restore(ctx, req, snapshot)
	if err != nil {
		return nil, err
	}
	if run == nil {
		return nil, errorf(CodeInvalidRequest, "provider %q restored no run", name)
	}
	rr := &restored{wrapped{inner: run, svc: s, provider: name, parent: req.Parent.SessionID}}
	if _, ok := run.(Resumable); ok {
		return &resumableRestored{rr}, nil
	}
	return rr, nil
}

// restored is a restored run: it ended before it was restored, so no
// start or end is announced for it.
type restored struct{ wrapped }

func (r *restored) Wait(ctx context.Context) (Result, error) { return r.inner.Wait(ctx) }
func (r *restored) Dispose() error                           { return r.inner.Dispose() }

type resumableRestored struct{ *restored }

func (r *resumableRestored) Resume(ctx context.Context, prompt string) (Run, error) {
	return r.resume(ctx, prompt)
}

// SnapshotOf returns the snapshot of a run the Service started or
// restored, through its wrapper; ok is false when the provider's run is
// not [Durable].
func SnapshotOf(run Run) (snap json.RawMessage, ok bool, err error) {
	for {
		if d, isDurable := run.(Durable); isDurable {
			snap, err = d.Snapshot()
			return snap, true, err
		}
		w, isWrapper := run.(interface{ unwrap() Run })
		if !isWrapper {
			return nil, false, nil
		}
		run = w.unwrap()
	}
}
