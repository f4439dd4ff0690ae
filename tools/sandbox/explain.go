// This file turns the sandbox's refusals in a command's output into
// advice: which path was refused, and the setting that would allow it.

package sandbox

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// lazyRegexp compiles a pattern on first use: the helper, which is this
// same binary, never needs these, and starts faster without them.
func lazyRegexp(pattern string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
}

// maxExplained bounds the refused paths named in one note.
const maxExplained = 3

// denied matches the ways programs print EACCES and EPERM: "Permission
// denied" (C, Python), "permission denied" (Go), EACCES (Node), and
// "Operation not permitted".
var denied = lazyRegexp(`(?i)permission denied|\bEACCES\b|operation not permitted`)

// netFailure matches what a program prints when it cannot reach the
// network.
var netFailure = lazyRegexp(`(?i)network is unreachable|could not resolve|temporary failure in name resolution|name or service not known|getaddrinfo|no such host|ENETUNREACH|EAI_AGAIN|connection refused|ECONNREFUSED`)

// pathToken finds the path-like words of a line: quoted strings, and
// unquoted words that start like a path.
var pathToken = lazyRegexp("'([^']+)'|\"([^\"]+)\"|‘([^’]+)’|`([^`']+)'|((?:~|\\.{1,2})?/[^\\s:,;'\"()]+)")

// deniedWord finds the word a program puts right before the error, as sh
// ("cannot create in.txt: Permission denied") and Go ("open in.txt:
// permission denied") do, for names that do not start like a path; a
// quoted name is pathToken's (coreutils quote it ‘so’ in a UTF-8 locale).
var deniedWord = lazyRegexp(`(?i)([^\s:'"‘’]+): permission denied`)

// Refusals are what a confined command's output shows its sandbox
// refused it.
type Refusals struct {
	// Paths are the refused paths (at most three), absolute: outside
	// every writable root (or readable one), where dshd itself could
	// write, so that the sandbox and not the file's own permissions
	// refused them.
	Paths []string
	// Network is set when the command has no network and its output
	// says it could not reach one.
	Network bool
}

// Refused reads output (a command's output, a process's stderr) for what
// the sandbox refused the command: the paths named on the lines that
// report EACCES or EPERM, and a network it could not reach with the
// network off. It finds nothing for a command that ran unconfined.
// [Cmd.Explain] words it for commands; whoever runs something else in a
// sandbox words it with that thing's own settings.
func (c *Cmd) Refused(output string) Refusals {
	var r Refusals
	if !c.confined {
		return r
	}
	for line := range strings.Lines(output) {
		if c.s.cfg.NoNetwork && netFailure().MatchString(line) {
			r.Network = true
		}
		if !denied().MatchString(line) {
			continue
		}
		if c.s.cfg.NoNetwork && strings.Contains(strings.ToLower(line), "connect") {
			r.Network = true
		}
		var words []string
		for _, m := range pathToken().FindAllStringSubmatchIndex(line, -1) {
			if m[0] == 0 && strings.HasPrefix(line[m[1]:], ":") {
				continue // the program naming itself: "/bin/sh: 1: cannot create ..."
			}
			words = append(words, firstGroup(line, m))
		}
		for _, m := range deniedWord().FindAllStringSubmatchIndex(line, -1) {
			if m[2] > 0 {
				words = append(words, line[m[2]:m[3]])
			}
		}
		for _, w := range words {
			if abs, ok := c.refused(w); ok && !slices.Contains(r.Paths, abs) && len(r.Paths) < maxExplained {
				r.Paths = append(r.Paths, abs)
			}
		}
	}
	return r
}

// Explain returns a note for the model when the command's output shows
// the sandbox refusing something, or "" when it does not: the refused
// paths ([Cmd.Refused]) and the setting that would allow them; or, with
// the network off, that the network is off.
func (c *Cmd) Explain(output string) string {
	r := c.Refused(output)
	var notes []string
	if len(r.Paths) > 0 {
		notes = append(notes, c.pathNote(r.Paths))
	}
	if r.Network {
		setting := c.s.cfg.Settings.Network
		notes = append(notes, "[dshd sandbox] Commands have no network ("+setting+"=false; only their own loopback works). To allow it, set "+setting+"=true.")
	}
	return strings.Join(notes, "\n")
}

// firstGroup returns the first group of match m (submatch indexes) that
// took part.
func firstGroup(line string, m []int) string {
	for i := 2; i+1 < len(m); i += 2 {
		if m[i] >= 0 {
			return line[m[i]:m[i+1]]
		}
	}
	return ""
}

// refused reports whether the sandbox, rather than the file's own
// permissions, is what refused path: it lies outside every writable root
// (or every readable one), and dshd itself may write where it points.
func (c *Cmd) refused(p string) (string, bool) {
	if p == "" {
		return "", false
	}
	if strings.HasPrefix(p, "~/") {
		return "", false
	}
	if !filepath.IsAbs(p) {
		if c.dir == "" {
			return "", false
		}
		p = filepath.Join(c.dir, p)
	}
	p = filepath.Clean(p)
	readable := c.s.reads == nil || under(p, slices.Concat(c.s.reads, SystemDirs, c.roots, c.writable, []string{c.tmp}))
	writable := under(p, append(slices.Clone(c.writable), c.tmp)) || slices.Contains(devFiles, p) || under(p, devDirs)
	if writable && readable {
		return "", false
	}
	// The nearest existing directory on the way: could dshd write there?
	probe := p
	for {
		switch writableByUs(probe) {
		case yes:
			return p, true
		case no:
			return "", false
		}
		parent := filepath.Dir(probe)
		if parent == probe {
			return "", false
		}
		probe = parent
	}
}

// access is what writableByUs found.
type access int

const (
	no access = iota
	yes
	missing // nothing there: ask its parent
)

// under reports whether p is one of dirs or below one.
func under(p string, dirs []string) bool {
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if rel, err := filepath.Rel(d, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return true
		}
	}
	return false
}

// pathNote words the refusal of paths for the mode.
func (c *Cmd) pathNote(paths []string) string {
	names := c.s.cfg.Settings
	var b strings.Builder
	b.WriteString("[dshd sandbox] The " + string(c.s.cfg.Mode) + " sandbox refused access to " + strings.Join(quoteAll(paths), ", ") + ": ")
	switch {
	case c.s.cfg.Mode == ReadOnly:
		b.WriteString("in read-only mode commands may write only to their private temp dir ($TMPDIR). To let commands change the workspace, use " + names.Mode + " workspace-write")
	default:
		b.WriteString("commands may write only in the workspace (" + strings.Join(quoteAll(c.roots), ", ") + "), ")
		if len(c.s.cfg.WritableRoots) > 0 {
			b.WriteString("the writable roots " + strings.Join(quoteAll(c.s.cfg.WritableRoots), ", ") + ", ")
		}
		b.WriteString("their private temp dir ($TMPDIR)")
		if !c.s.cfg.NoCaches {
			b.WriteString(" and the toolchain caches")
		}
		b.WriteString(". To allow more, add the directory to " + names.WritableRoots)
	}
	if c.s.reads != nil {
		b.WriteString("; reads are confined too: add directories to read to " + names.ReadableRoots)
	}
	b.WriteString(", or turn the sandbox off with " + names.Mode + " off. Writing to the temp dir or the workspace instead may be enough.")
	return b.String()
}
