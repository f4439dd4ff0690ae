// This file places runs on the endpoints of a remote binding: several URLs,
// or one URL whose host name resolves to several addresses (a Kubernetes
// headless Service). Each child goes to the endpoint with the fewest live
// children of this provider, ties broken round robin; an endpoint that
// fails is skipped for a while; a child stays on its endpoint for steering
// and resume.

package acpprovider

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/dshd/dshd/acp/remote"
)

// downFor is how long an endpoint that failed is passed over while others
// are left.
const downFor = 30 * time.Second

// fleet is the provider's view of the remote endpoints it has used.
type fleet struct {
	mu   sync.Mutex
	eps  map[string]*endpoint // by URL
	turn uint64               // round-robin position among equals
	// lookup resolves a host name (tests replace it); nil is the system
	// resolver.
	lookup func(ctx context.Context, host string) ([]string, error)
	// serverNames maps an endpoint that stands for a resolved address to
	// the name it was resolved from, which TLS verifies.
	serverNames map[string]string
}

// endpoint is one agent of a fleet.
type endpoint struct {
	client    *http.Client // its cookie jar keeps the affinity across reconnects
	children  int          // live children placed here
	downUntil time.Time
}

func (f *fleet) get(u string) *endpoint { return entry(&f.eps, u) }

// entry returns the value of key in *m, adding a new one (and making the
// map) when there is none.
func entry[V any](m *map[string]*V, key string) *V {
	if *m == nil {
		*m = map[string]*V{}
	}
	v := (*m)[key]
	if v == nil {
		v = new(V)
		(*m)[key] = v
	}
	return v
}

// httpClient returns the HTTP client of an endpoint: one per endpoint, so
// its cookies (a load balancer's affinity) survive reconnects. An
// endpoint that stands for an address of a resolved name verifies TLS
// against that name.
func (p *Provider) httpClient(u string) *http.Client {
	f := &p.fleet
	f.mu.Lock()
	defer f.mu.Unlock()
	e := f.get(u)
	if e.client == nil {
		e.client = remote.NewClient()
		if name, ok := f.serverNames[u]; ok {
			tr := e.client.Transport.(*http.Transport)
			tr.TLSClientConfig = &tls.Config{ServerName: name, MinVersion: tls.VersionTLS12}
		}
	}
	return e.client
}

// closeClients drops the idle connections of every endpoint's client.
func (f *fleet) closeClients() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, e := range f.eps {
		if e.client != nil {
			e.client.CloseIdleConnections()
		}
	}
}

// expand returns the endpoint URLs of t: each configured URL, one whose
// host name resolves to several addresses standing for each of them (in
// the resolver's order). A name that does not resolve is kept as it is,
// so the dial names the failure.
func (p *Provider) expand(ctx context.Context, t *target) []string {
	var out []string
	for _, raw := range t.endpoints {
		u, err := url.Parse(raw)
		if err != nil || net.ParseIP(u.Hostname()) != nil || u.Hostname() == "localhost" {
			out = append(out, raw)
			continue
		}
		lookup := p.fleet.lookup
		if lookup == nil {
			lookup = net.DefaultResolver.LookupHost
		}
		addrs, err := lookup(ctx, u.Hostname())
		if err != nil || len(addrs) == 0 {
			out = append(out, raw)
			continue
		}
		slices.Sort(addrs)
		for _, a := range addrs {
			v := *u
			v.Host = net.JoinHostPort(a, u.Port())
			s := v.String()
			p.fleet.mu.Lock()
			if p.fleet.serverNames == nil {
				p.fleet.serverNames = map[string]string{}
			}
			p.fleet.serverNames[s] = u.Hostname()
			p.fleet.mu.Unlock()
			out = append(out, s)
		}
	}
	return out
}

// order returns urls in the order to try them for a new child: endpoints
// that are up before those that failed lately, fewer live children first,
// equals in round-robin order.
func (f *fleet) order(urls []string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	type cand struct {
		u    string
		down bool
		n    int
		pos  int
	}
	cs := make([]cand, len(urls))
	start := int(f.turn % uint64(max(len(urls), 1)))
	f.turn++
	for i, u := range urls {
		e := f.get(u)
		cs[i] = cand{u: u, down: now.Before(e.downUntil), n: e.children, pos: (i - start + len(urls)) % len(urls)}
	}
	slices.SortStableFunc(cs, func(a, b cand) int {
		switch {
		case a.down != b.down:
			if a.down {
				return 1
			}
			return -1
		case a.n != b.n:
			return a.n - b.n
		}
		return a.pos - b.pos
	})
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.u
	}
	return out
}

// placed counts a child on an endpoint; released uncounts it.
func (f *fleet) placed(u string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.get(u).children++
}

func (f *fleet) released(u string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if e := f.get(u); e.children > 0 {
		e.children--
	}
}

// failed marks an endpoint down for downFor.
func (f *fleet) failed(u string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.get(u).downUntil = time.Now().Add(downFor)
}

// at returns a copy of t aimed at one endpoint.
func (t *target) at(u string) *target {
	c := *t
	c.address = u
	return &c
}
