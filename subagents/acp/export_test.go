package acpprovider

// Load is what one connection's requests hold at once in the parent.
type Load = load

// ObserveLoad has every connection of a provider made with o call fn,
// under a lock, each time what its requests hold changes.
func ObserveLoad(o *Options, fn func(Load)) { o.observeLoad = fn }
