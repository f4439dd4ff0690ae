// Package shellwords splits a line into words the way a shell does,
// without expanding anything, and quotes words so that they split back
// the same: the one place the acp provider's command and args options,
// agent definition files and slash-command arguments agree on what a word
// is. It imports only the standard library.
package shellwords
