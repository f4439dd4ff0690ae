// Package mdfiles lists the Markdown files of a directory, with a stamp
// that tells one version of a file from another without reading it: the
// one listing behind agent definitions (subagents/definition) and slash
// command files (prompt/commands), which both read every *.md file of a
// few directories and read them again only when a stamp changed. A
// stamp also holds the file's type, so a file that is not regular is
// refused without being opened; the files themselves are read through
// internal/smallfile.
//
// It imports only the standard library and internal/smallfile, and starts
// no goroutines.
package mdfiles
