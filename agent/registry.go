// This file holds the registry of live agents.

package agent

import "sync"

// Registry maps the ids of live agents to the agents. The zero value is
// ready to use and safe for concurrent use.
type Registry struct {
	mu     sync.RWMutex
	agents map[string]*Agent
}

// Get returns the live agent with the given id.
func (r *Registry) Get(id string) (*Agent, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	a, ok := r.agents[id]
	return a, ok
}

// Len returns the number of live agents.
func (r *Registry) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.agents)
}

func (r *Registry) add(a *Agent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.agents == nil {
		r.agents = make(map[string]*Agent)
	}
	r.agents[a.id] = a
}

// remove deletes a only if it is still the agent registered under its id,
// so a late Close of an old agent never removes a newer one.
func (r *Registry) remove(a *Agent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.agents[a.id] == a {
		delete(r.agents, a.id)
	}
}
