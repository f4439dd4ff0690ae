// Package mdfiles lists the Markdown files of a directory, with a stamp
// that tells one version of a file from another without reading it: the
// one listing behind agent definitions (subagents/definition) and slash
// command files (prompt/commands), which both read every *.md file of a
// few directories and read them again only when a stamp changed. Read
// reads a listed file (on Linux with raw system calls: most of the cost
// of reading a small file through the os package is the *os.File).
//
// It imports only the standard library and starts no goroutines.
package mdfiles
