// Package definition reads agent definitions: Markdown files with YAML
// front matter that each define one subagent tool, bound to one provider
// under its own name (a [subagent.Binding]).
//
// Files are read from the workspace (.dshd/agents/*.md, and Claude Code's
// .claude/agents/*.md with Claude Code's meaning: its tool names map onto
// dshd's) and from the user's config dir ($XDG_CONFIG_HOME/dshd/agents);
// the workspace wins on a name clash, and within one place .dshd wins over
// .claude. The front matter says what the agent is for (description, the
// head of the tool's description), which provider runs it and with what
// (tools, disallowedTools, model, outputSchema, maxDepth, maxTurns,
// maxTokens, permissions); the body is the child's system prompt, a
// {{var}} template.
//
// An acp definition's sandbox keys (sandbox, writable, network) become the
// acp provider's binding options. A workspace definition came with the
// repository, so a program it names runs in the workspace-write sandbox
// (unless it is a child dshd, which runs in the daemon's), and the file
// may tighten that but not loosen it: sandbox: off, or a writable
// directory outside the workspace (or an outputSchema file outside it,
// which dshd itself would read), is an error, and so are the args of a
// child dshd (its command, or a config-file agent that is one) that set
// its sandbox or its state dir, and any args for a config-file agent
// that runs unconfined; the user's definitions may set anything.
//
// A definition that cannot work is rejected when it is read, with one
// [*Error] naming the file, the line, the key and, when the provider lacks
// what the key needs, the provider and the capability: a key nobody
// knows, a tool name that does not exist, a schema that is none, a model
// the backend does not serve, a name another tool has. Nothing is
// dropped silently.
//
// A [Library] keeps one tool layer per workspace with the definitions'
// tools in it, shared by the sessions in that workspace, and brings it up
// to date with the files ([Workspace.Refresh]): a new, changed or deleted
// file registers, re-derives or unregisters its tool, through
// [subagent.Bind], which follows the provider's lifecycle.
//
// A workspace's definition files, and the schema files they name, are
// listed and read through the workspace as an os.Root
// (internal/smallfile): one that leads outside it, by a path or a
// symbolic link, is a mistake naming it, and nothing of it is read; the
// user's own directory may link anywhere.
//
// The package imports tools/subagent, subagents, tools and
// internal/frontmatter, never a provider. Reading many files spreads the
// parsing and checking over the cores, on goroutines that end before the
// call returns; nothing runs in the background.
package definition
