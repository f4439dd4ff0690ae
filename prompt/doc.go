// Package prompt renders prompt templates and holds the embedded system
// prompts of the coding agent, its subagent children and context
// compaction.
//
// The renderer is deliberately tiny: a template is text with {{name}}
// groups, and a group is replaced by the value registered for name in a
// [Vars]. There are no conditionals, loops or escapes. The rules, which
// the tests name one by one, are:
//
//   - A group is "{{", a name, "}}", with nothing else between the
//     braces: a name matches ^[a-z][a-z0-9_]*$ exactly ([NamePattern]).
//     A complete group holding anything else ("{{ model }}", "{{Model}}",
//     "{{a.b}}", "{{a-b}}", "{{_x}}", "{{}}") is an error, so a typo
//     fails loudly instead of reaching the model.
//   - A name is looked up only among the registered variables (and then a
//     [Resolver], if one is given). An unregistered name is an error that
//     names it and lists the registered variables, or "(none)"; nothing
//     else is ever spliced in.
//   - A "{{" that opens no complete group while a "}}" still follows later
//     in the text ("{{{model}}}", "{{a{b}}") is an error.
//   - A lone "{{" with no "}}" anywhere after it stays verbatim, and so
//     does a "}}" with no opener.
//   - Substituted values are never re-scanned: a value containing "{{x}}"
//     is inserted literally.
//
// Errors are [*RenderError] values carrying the position, and match
// [ErrUnknownVariable] or [ErrMalformedGroup] with errors.Is.
//
// Render only text the project wrote (the embedded templates). Text from
// elsewhere — AGENTS.md, user messages, tool output — goes in as a
// variable value or is appended after rendering, never rendered itself.
//
// Of the project, this package imports only internal/smallfile (the
// reader of AGENTS.md), internal/utf8cut and internal/settingnames (the
// name of the bound on AGENTS.md); it starts no goroutines.
package prompt
