//go:build !unix

package localrun

// defaultShell runs a command line: a POSIX sh from PATH, since commands
// are written for one (there is no /bin here; Git for Windows and MSYS2
// put an sh on PATH).
const defaultShell = "sh"
