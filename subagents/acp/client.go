// This file serves the agent's requests (the acp.Client side): each names
// a session, which leads to the child whose parent serves it.

package acpprovider

import (
	"context"
	"sync"
	"time"

	"github.com/dshd/dshd/acp"

	"github.com/dshd/dshd/acp/rpc"
)

// routeFor finds the session a request names. A request may race the
// announcement of the session it names; it waits for it a little
// (HoldUnknown) and then fails with -32002. Callers have detached.
func (pr *peer) routeFor(ctx context.Context, id acp.SessionID) (*route, error) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		pr.mu.Lock()
		rt := pr.routes[id]
		changed := pr.changed
		pr.mu.Unlock()
		if rt != nil {
			return rt, nil
		}
		if timer == nil {
			timer = time.NewTimer(pr.p.o.HoldUnknown)
		}
		select {
		case <-changed:
		case <-timer.C:
			return nil, acp.ErrResourceNotFound.WithData(map[string]any{"sessionId": id, "reason": "unknown session"})
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// serve runs a request of the session id for its child: detached from
// the dispatcher (a request may wait for the user), and cancelled when the
// child is closed as well as when the request is.
//
// At most MaxRequests of the agent's requests are served at once: the
// slot is taken before detaching, so beyond the bound the dispatcher
// waits, the connection reads no more, and an agent that sends requests
// without end costs the parent a bounded number of goroutines. The slot
// is given back only once the answer is in the connection's output queue
// (rpc.AfterAnswer), not when fn returns: an answer waiting for room in
// that queue holds its whole text (a file read, up to the read cap, and
// its encoding), and an agent that does not read its answers would
// otherwise have the parent read one file after another into memory
// (K reads of a 31 MB file held K answers at once). So MaxRequests
// bounds the answers held too. A request that waits for its session to
// be announced waits at most HoldUnknown, and a peer that takes none of
// its output is closed at the write timeout, so a full set of slots
// always frees.
func serve[R any](ctx context.Context, pr *peer, id acp.SessionID, fn func(ctx context.Context, rt *route) (*R, error)) (*R, error) {
	select {
	case pr.slots <- struct{}{}:
	default:
		if !pr.loggedSlots.Swap(true) {
			pr.log.Warn("the agent has the most requests served at once it may have; reading no more of its messages until one is answered", "setting", pr.p.o.Settings.MaxRequests, "limit", cap(pr.slots), "peer", pr.t.where())
		}
		pr.load.add(pr, load{Waiting: 1})
		select {
		case pr.slots <- struct{}{}:
			pr.load.add(pr, load{Waiting: -1})
		case <-ctx.Done():
			pr.load.add(pr, load{Waiting: -1})
			return nil, ctx.Err()
		}
	}
	pr.load.add(pr, load{Serving: 1, Taken: 1})
	rpc.AfterAnswer(ctx, func() {
		pr.load.add(pr, load{Held: -1})
		<-pr.slots
	})
	defer pr.load.add(pr, load{Serving: -1, Held: 1})
	rpc.Detach(ctx)
	rt, err := pr.routeFor(ctx, id)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(rt.c.ctx, cancel)
	defer stop()
	return fn(ctx, rt)
}

// load is what a peer's requests hold at once: Serving of them are being
// served (Budget of those wait for the read budget, Reading read a
// file), Held have their answer and wait for room in the output queue,
// and Waiting is 1 while the next one waits for a slot. Each request
// holds its slot from Serving through Held. Taken counts the requests
// that took a slot.
type load struct {
	Serving, Budget, Reading, Held, Waiting, Taken int
}

// loadCount keeps a peer's load and shows each change to
// Options.observeLoad (a test's look at what the parent holds); without
// an observer it counts nothing.
type loadCount struct {
	mu sync.Mutex
	n  load // guarded by mu
}

func (l *loadCount) add(pr *peer, d load) {
	observe := pr.p.o.observeLoad
	if observe == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n.Serving += d.Serving
	l.n.Budget += d.Budget
	l.n.Reading += d.Reading
	l.n.Held += d.Held
	l.n.Waiting += d.Waiting
	l.n.Taken += d.Taken
	observe(l.n)
}

// RequestPermission implements acp.Client: the question goes through the
// parent's permission gate.
func (pr *peer) RequestPermission(ctx context.Context, req *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
	return serve(ctx, pr, req.SessionID, func(ctx context.Context, rt *route) (*acp.RequestPermissionResponse, error) {
		return rt.c.permission(ctx, rt, req)
	})
}

// ReadTextFile implements acp.Client.
func (pr *peer) ReadTextFile(ctx context.Context, req *acp.ReadTextFileRequest) (*acp.ReadTextFileResponse, error) {
	if !pr.caps.FS.ReadTextFile {
		return nil, notOffered(acp.MethodFsReadTextFile)
	}
	return serve(ctx, pr, req.SessionID, func(ctx context.Context, rt *route) (*acp.ReadTextFileResponse, error) {
		return rt.c.readFile(ctx, pr, req)
	})
}

// WriteTextFile implements acp.Client.
func (pr *peer) WriteTextFile(ctx context.Context, req *acp.WriteTextFileRequest) (*acp.WriteTextFileResponse, error) {
	if !pr.caps.FS.WriteTextFile {
		return nil, notOffered(acp.MethodFsWriteTextFile)
	}
	return serve(ctx, pr, req.SessionID, func(ctx context.Context, rt *route) (*acp.WriteTextFileResponse, error) {
		return rt.c.writeFile(ctx, req)
	})
}

// CreateTerminal implements acp.Client.
func (pr *peer) CreateTerminal(ctx context.Context, req *acp.CreateTerminalRequest) (*acp.CreateTerminalResponse, error) {
	if !pr.caps.Terminal {
		return nil, notOffered(acp.MethodTerminalCreate)
	}
	return serve(ctx, pr, req.SessionID, func(ctx context.Context, rt *route) (*acp.CreateTerminalResponse, error) {
		return rt.c.createTerminal(ctx, req)
	})
}

// TerminalOutput implements acp.Client.
func (pr *peer) TerminalOutput(ctx context.Context, req *acp.TerminalOutputRequest) (*acp.TerminalOutputResponse, error) {
	if !pr.caps.Terminal {
		return nil, notOffered(acp.MethodTerminalOutput)
	}
	return serve(ctx, pr, req.SessionID, func(ctx context.Context, rt *route) (*acp.TerminalOutputResponse, error) {
		return rt.c.terms.output(req.TerminalID)
	})
}

// WaitForTerminalExit implements acp.Client.
func (pr *peer) WaitForTerminalExit(ctx context.Context, req *acp.WaitForTerminalExitRequest) (*acp.WaitForTerminalExitResponse, error) {
	if !pr.caps.Terminal {
		return nil, notOffered(acp.MethodTerminalWaitForExit)
	}
	return serve(ctx, pr, req.SessionID, func(ctx context.Context, rt *route) (*acp.WaitForTerminalExitResponse, error) {
		return rt.c.terms.wait(ctx, req.TerminalID)
	})
}

// KillTerminal implements acp.Client.
func (pr *peer) KillTerminal(ctx context.Context, req *acp.KillTerminalRequest) (*acp.KillTerminalResponse, error) {
	if !pr.caps.Terminal {
		return nil, notOffered(acp.MethodTerminalKill)
	}
	return serve(ctx, pr, req.SessionID, func(ctx context.Context, rt *route) (*acp.KillTerminalResponse, error) {
		return &acp.KillTerminalResponse{}, rt.c.terms.kill(req.TerminalID)
	})
}

// ReleaseTerminal implements acp.Client.
func (pr *peer) ReleaseTerminal(ctx context.Context, req *acp.ReleaseTerminalRequest) (*acp.ReleaseTerminalResponse, error) {
	if !pr.caps.Terminal {
		return nil, notOffered(acp.MethodTerminalRelease)
	}
	return serve(ctx, pr, req.SessionID, func(ctx context.Context, rt *route) (*acp.ReleaseTerminalResponse, error) {
		return &acp.ReleaseTerminalResponse{}, rt.c.terms.release(req.TerminalID)
	})
}

// CreateElicitation implements acp.Client: the parent does not offer
// elicitation to its children (nobody could answer a form on their
// behalf), so it is not found.
func (pr *peer) CreateElicitation(ctx context.Context, req *acp.CreateElicitationRequest) (*acp.CreateElicitationResponse, error) {
	return nil, notOffered(acp.MethodElicitationCreate)
}

// CompleteElicitation implements acp.Client; there is nothing to complete.
func (pr *peer) CompleteElicitation(ctx context.Context, n *acp.CompleteElicitationNotification) error {
	return nil
}

// notOffered is the answer to a method the parent did not advertise.
func notOffered(method string) error {
	return acp.ErrMethodNotFound.WithData(map[string]any{"method": method})
}
