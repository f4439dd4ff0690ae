// Package search is the engine behind the glob and grep tools: a parallel
// directory walk that honours .gitignore and skips .git, glob patterns with
// "**" and braces, the first results of a walk in path order, and the
// scanner that searches one file for a regular expression.
//
// It knows nothing of tools, workspaces or permissions and imports only
// internal/utf8cut, internal/smallfile (the reader of the ignore files a
// repository holds) and internal/settingnames (the names of its
// [Limits]) of the project. The walk's goroutines are started
// and waited for inside [Walker.Run].
package search
