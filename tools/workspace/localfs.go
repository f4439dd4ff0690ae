// This file implements the local file system of a workspace: paged reads
// that stream the file, atomic writes, both through the workspace's roots.

package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
)

// DefaultMaxReadBytes is the most a [LocalFS] read holds in memory when
// MaxReadBytes is zero.
const DefaultMaxReadBytes = 32 << 20

// ErrTooLarge reports a read that would have to hold more than
// [ReadLimits.MaxReadBytes] in memory; the caller should ask for fewer
// lines.
var ErrTooLarge = errors.New("too large to read at once")

// ReadLimits bound what one [LocalFS] read holds; the zero value takes the
// defaults.
type ReadLimits struct {
	// MaxReadBytes caps the bytes one ReadTextFile returns; a read that
	// would exceed it fails with an error wrapping [ErrTooLarge]. Zero
	// means [DefaultMaxReadBytes]. Whatever reads a file for someone else
	// (a tool, a child agent's fs/read_text_file) holds at most this much
	// of it per read.
	MaxReadBytes int
	// Setting names MaxReadBytes in the error of a read over it and in the
	// log line (the daemon's flag); empty means "MaxReadBytes".
	Setting string
}

// LocalFS is the local disk seen through a workspace: the file system
// tools use when the editor does not offer fs/* (it has the method set of
// tools.FileSystem). Paths are absolute and already resolved by
// [Workspace.Resolve]. A missing file is an error matching
// [io/fs.ErrNotExist]. A LocalFS is safe for concurrent use.
type LocalFS struct {
	ws *Workspace
	ReadLimits
	// Logger gets one line, naming the setting, the first time a read is
	// over MaxReadBytes (later ones are only refused: the caller tells
	// whoever asked); nil logs nothing.
	Logger *slog.Logger
	logged atomic.Bool
}

// NewLocalFS returns the local file system of ws, with default limits.
func NewLocalFS(ws *Workspace) *LocalFS { return &LocalFS{ws: ws} }

// readChunk is the size of the reads ReadTextFile streams a file with.
const readChunk = 256 << 10

var readBuffers = sync.Pool{New: func() any { b := make([]byte, readChunk); return &b }}

// ReadTextFile returns up to limit lines starting at the 1-based line (0
// for both means the whole file). It streams the file: the lines before
// line are counted, never kept, so a window deep inside a huge file costs
// one pass and a chunk of memory. The file is opened through its root.
func (l *LocalFS) ReadTextFile(ctx context.Context, path string, line, limit int) (string, error) {
	f, err := l.ws.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return l.readLines(ctx, f, path, line, limit)
}

// maxRead is the read cap in effect.
func (l *LocalFS) maxRead() int {
	if l.MaxReadBytes > 0 {
		return l.MaxReadBytes
	}
	return DefaultMaxReadBytes
}

// readLines reads the window of lines of f (see ReadTextFile).
func (l *LocalFS) readLines(ctx context.Context, f io.Reader, path string, line, limit int) (string, error) {
	maxBytes := l.maxRead()
	skip := max(line-1, 0) // newlines still to pass before the window
	want := limit          // lines still to collect; <= 0 means all
	var out []byte
	bp := readBuffers.Get().(*[]byte)
	defer readBuffers.Put(bp)
	buf := *bp
	for {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		n, rerr := f.Read(buf)
		chunk := buf[:n]
		if skip > 0 && len(chunk) > 0 {
			if c := bytes.Count(chunk, []byte{'\n'}); c < skip {
				skip -= c
				chunk = nil
			} else {
				for skip > 0 {
					i := bytes.IndexByte(chunk, '\n')
					chunk = chunk[i+1:]
					skip--
				}
			}
		}
		if skip == 0 && len(chunk) > 0 {
			done := false
			if want > 0 {
				end := 0
				for want > 0 {
					i := bytes.IndexByte(chunk[end:], '\n')
					if i < 0 {
						end = len(chunk)
						break
					}
					end += i + 1
					want--
				}
				if want == 0 {
					done = true
				}
				chunk = chunk[:end]
			}
			if len(out)+len(chunk) > maxBytes {
				return "", l.tooLarge(path, maxBytes)
			}
			out = append(out, chunk...)
			if done {
				return string(out), nil
			}
		}
		if rerr == io.EOF {
			return string(out), nil
		}
		if rerr != nil {
			return "", rerr
		}
	}
}

// tooLarge is the error of a read of path over maxBytes, logged the first
// time. The setting comes before the path, so a cut of the message (a
// child's answer keeps 300 bytes) still names it.
func (l *LocalFS) tooLarge(path string, maxBytes int) error {
	setting := l.Setting
	if setting == "" {
		setting = "MaxReadBytes"
	}
	if l.Logger != nil && !l.logged.Swap(true) {
		l.Logger.Warn("refused to read a file at once: it is over the read limit (reads of fewer lines work)",
			"setting", setting, "limit", maxBytes, "path", path)
	}
	return fmt.Errorf("%w: more than %d bytes (the limit %s); read fewer lines: %s", ErrTooLarge, maxBytes, setting, path)
}

// WriteTextFile replaces the file's content atomically (see
// [PendingWrite.Commit]), creating missing parent directories.
func (l *LocalFS) WriteTextFile(ctx context.Context, path, content string) error {
	w, err := l.PrepareWrite(path)
	if err != nil {
		return err
	}
	defer w.Close()
	return w.Commit(ctx, content)
}
