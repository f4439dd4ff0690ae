// Package cmdenv decides the environment a command dshd starts gets: the
// shell commands of run_command, and any other child that must not see
// dshd's own secrets. It imports only internal/secret of dshd, the rule
// for a secret's name it shares with MCP servers and child agents.
//
// A [Policy] is applied to an environment (os.Environ, usually) in five
// steps, after codex's shell_environment_policy:
//
//  1. Inherit: all variables (the default), the core ones programs need
//     to run ([Core]: PATH, HOME, USER, SHELL, TMPDIR, LANG, ...), or none.
//  2. Unless KeepSecretNames is set, drop every name [secret.Name] takes
//     for a credential's: KEY, SECRET, TOKEN, PASSWORD, PASSWD,
//     PASSPHRASE, CREDENTIAL or COOKIE in it, in any case (GITHUB_TOKEN,
//     AWS_SECRET_ACCESS_KEY, PGPASSWORD).
//  3. Drop the names matching an Exclude pattern.
//  4. Add the Set entries, replacing variables of the same name.
//  5. When IncludeOnly has patterns, keep only the names matching one.
//
// Patterns are shell globs (*, ?, [...]) matched against the whole name,
// ignoring case. Last, whatever the steps above let through, the
// variables named in Secrets and every variable whose value is one of
// SecretValues are removed: dshd's own token and model key never reach a
// command, not even through a Set entry or a copy under another name.
package cmdenv
