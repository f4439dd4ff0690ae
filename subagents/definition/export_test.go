package definition

import "time"

// Load reads every definition in sources, as a workspace does: on a name
// clash the earlier source wins. Only the tests read files without a
// Library.
func Load(sources []Source) ([]*Definition, []*Error) {
	c := cache{bounds: boundsOf(0, Settings{})}
	now := time.Now()
	stamps, from, errs := scan(sources)
	got := c.load(stamps, from, now)
	return got.defs, append(errs, got.errs...)
}
