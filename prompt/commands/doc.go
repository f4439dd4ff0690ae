// Package commands is dshd's slash commands: the built-in ones (/compact,
// /init, /agents) and the ones users write in files, which ACP's
// available_commands_update advertises to the editor.
//
// A command file is Markdown with optional YAML front matter, read from
// the workspace (.dshd/commands/*.md, then Claude Code's
// .claude/commands/*.md) and from the user's config dir
// ($XDG_CONFIG_HOME/dshd/commands/*.md); the file's name is the command's
// name, and the workspace wins on a clash. Front matter: description,
// argument-hint, allowed-tools (a list, or Claude Code's comma-separated
// string, of tool names: Claude Code's map onto dshd's in every
// directory; a name that is no tool of the session is a mistake the
// session tells, and the command runs with the others), model. The body
// is the prompt: "/name some words" sends it with $ARGUMENTS replaced by
// "some words" and $1, $2, … by the words one by one. A built-in command's
// name cannot be taken by a file.
//
// [Split] recognises "/name args" in a prompt; a name that is no command
// is not one of ours, and the text goes to the model as it is.
//
// A command file is read through internal/smallfile: a FIFO or a link to a
// device in a repository's command directory is a mistake naming it,
// never waited for nor read. A workspace's files are listed and read
// through the workspace as an os.Root, so one that leads outside it (a
// link to ~/.aws/credentials) is a mistake too, and nothing of it is read;
// the user's own directory may link anywhere.
//
// The package imports only internal helpers of the project (frontmatter,
// mdfiles, shellwords, smallfile, suggest) and starts no goroutines.
package commands
