// This file searches one file for grep: the whole buffer at once with the
// regexp (fast when matches are rare), line by line only around matches,
// streaming files of any size through a bounded buffer.

package search

import (
	"bytes"
	"io"
	"regexp"
	"sync"

	"github.com/dshd/dshd/internal/utf8cut"
)

// Line is one output line of a file: a match or context around one.
type Line struct {
	N     int // 1-based
	Text  string
	Match bool
}

// Hits is what a search found in one file.
type Hits struct {
	Lines   []Line
	Matches int
}

// Grep holds what every file of one search shares.
type Grep struct {
	Re            *regexp.Regexp
	Before, After int
	MaxMatches    int // per file; the search never keeps more overall
	MaxLine       int // output lines are cut to this many bytes
	MaxLineBytes  int // a longer line makes the rest of its file skipped
	chunk         int // the buffer's initial size; 0 means grepChunk (tests make it tiny)
}

const (
	grepChunk     = 64 << 10
	binarySniffed = 8 << 10
)

var grepBuffers = sync.Pool{New: func() any { b := make([]byte, grepChunk); return &b }}

// grepFileState is the scan of one file in progress.
type grepFileState struct {
	s            *Grep
	buf          []byte
	hits         Hits
	lastEmitted  int // number of the last line emitted
	pendingAfter int // context lines still owed after the last match
	done         bool
}

// Search searches the file f reads. binary reports a file skipped for a
// NUL byte near its start.
func (s *Grep) Search(f io.Reader) (hits Hits, binary bool, err error) {
	st := &grepFileState{s: s}
	if s.chunk > 0 {
		st.buf = make([]byte, s.chunk)
	} else {
		bp := grepBuffers.Get().(*[]byte)
		st.buf = *bp
		defer func() {
			if cap(st.buf) <= 4*grepChunk {
				*bp = st.buf[:cap(st.buf)]
				grepBuffers.Put(bp)
			}
		}()
	}

	n := 0        // bytes held in buf
	scan := 0     // offset of the first line not yet searched
	scanLine := 1 // its line number
	first := true
	for !st.done {
		eof := false
		if n == len(st.buf) {
			if len(st.buf) >= s.MaxLineBytes {
				break // a line longer than we are willing to hold
			}
			grown := make([]byte, 2*len(st.buf))
			copy(grown, st.buf[:n])
			st.buf = grown
		}
		m, rerr := f.Read(st.buf[n:])
		n += m
		if rerr == io.EOF {
			eof = true
		} else if rerr != nil {
			return st.hits, false, rerr
		}
		if first && (n >= binarySniffed || n == len(st.buf) || eof) {
			first = false
			if bytes.IndexByte(st.buf[:min(n, binarySniffed)], 0) >= 0 {
				return Hits{}, true, nil
			}
		}
		if first {
			continue
		}
		end := n
		if !eof {
			end = bytes.LastIndexByte(st.buf[scan:n], '\n') + 1
			if end == 0 {
				continue // no complete line yet: read (and maybe grow) more
			}
			end += scan
		}
		scanLine = st.region(scan, end, scanLine)
		if eof {
			break
		}
		// Keep the lines before end that before-context may still need.
		keep := end
		for k := 0; k < s.Before && keep > 0; k++ {
			keep = bytes.LastIndexByte(st.buf[:keep-1], '\n') + 1
		}
		copy(st.buf, st.buf[keep:n])
		n -= keep
		scan = end - keep
	}
	return st.hits, false, nil
}

// region searches the complete lines buf[from:end] (the last one may lack
// its newline at the end of the file), whose first line is number line,
// and returns the number of the line at end.
func (st *grepFileState) region(from, end, line int) int {
	buf := st.buf
	textEnd := end
	if textEnd > from && buf[textEnd-1] == '\n' {
		textEnd--
	}
	pos := from
	for pos < end && !st.done {
		if st.pendingAfter > 0 {
			le := lineEnd(buf, pos, textEnd)
			st.emit(line, buf[pos:le], st.s.Re.Match(buf[pos:le]))
			pos, line = le+1, line+1
			continue
		}
		loc := st.s.Re.FindIndex(buf[pos:textEnd])
		if loc == nil {
			break
		}
		ms := pos + loc[0]
		ls := bytes.LastIndexByte(buf[pos:ms], '\n') + 1 + pos
		le := lineEnd(buf, ms, textEnd)
		n := line + bytes.Count(buf[pos:ls], []byte{'\n'})
		if pos+loc[1] > le && !st.s.Re.Match(buf[ls:le]) {
			// The match ran across lines and its first line does not match
			// on its own: grep matches lines, so go on after it.
			pos, line = le+1, n+1
			continue
		}
		st.emitBefore(ls, n)
		st.emit(n, buf[ls:le], true)
		pos, line = le+1, n+1
	}
	if pos < end {
		line += bytes.Count(buf[pos:end], []byte{'\n'})
	}
	return line
}

// lineEnd returns the offset of the newline ending the line at pos, or
// limit.
func lineEnd(buf []byte, pos, limit int) int {
	if i := bytes.IndexByte(buf[pos:limit], '\n'); i >= 0 {
		return pos + i
	}
	return limit
}

// emitBefore emits up to before lines preceding the line that starts at
// offset ls and has number n, skipping lines already emitted.
func (st *grepFileState) emitBefore(ls, n int) {
	type span struct{ from, to, n int }
	var spans [8]span
	ctx := spans[:0]
	off := ls
	for k := 0; k < st.s.Before && off > 0 && n-k-1 > st.lastEmitted; k++ {
		start := bytes.LastIndexByte(st.buf[:off-1], '\n') + 1
		ctx = append(ctx, span{start, off - 1, n - k - 1})
		off = start
	}
	for i := len(ctx) - 1; i >= 0; i-- {
		st.emit(ctx[i].n, st.buf[ctx[i].from:ctx[i].to], false)
	}
}

// emit records line n.
func (st *grepFileState) emit(n int, text []byte, match bool) {
	text = bytes.TrimSuffix(text, []byte{'\r'})
	st.hits.Lines = append(st.hits.Lines, Line{N: n, Text: CutLine(string(text[:min(len(text), st.s.MaxLine+4)]), st.s.MaxLine), Match: match})
	st.lastEmitted = n
	if !match {
		st.pendingAfter--
		return
	}
	st.hits.Matches++
	st.pendingAfter = st.s.After
	if st.hits.Matches >= st.s.MaxMatches {
		st.done = true
	}
}

// CutLine shortens s to at most n bytes at a character boundary, marking
// the cut.
func CutLine(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return utf8cut.Prefix(s, n) + "… [line cut]"
}
