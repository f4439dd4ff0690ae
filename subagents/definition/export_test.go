package definition

// Load reads every definition in sources, as a workspace does: on a name
// clash the earlier source wins. Only the tests read files without a
// Library.
func Load(sources []Source) ([]*Definition, []*Error) {
	var c cache
	stamps, from, errs := scan(sources)
	defs, perr := c.load(stamps, from)
	return defs, append(errs, perr...)
}
