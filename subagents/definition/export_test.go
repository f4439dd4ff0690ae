package definition

import "time"

// Load reads every definition in sources, as a workspace does: on a name
// clash the earlier source wins. Only the tests read files without a
// Library.
func Load(sources []Source) ([]*Definition, []*Error) {
	c := cache{bounds: boundsOf(0, 0, Settings{})}
	now := time.Now()
	found := scan(sources, c.bounds)
	got := c.load(found.stamps, found.from, now)
	return got.defs, append(found.mistakes(), got.errs...)
}
