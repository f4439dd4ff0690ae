// This file implements the local file system of a workspace: paged reads
// that stream the file, atomic writes, both through the workspace's roots.

package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// DefaultMaxReadBytes is the most a [LocalFS] read holds in memory when
// MaxReadBytes is zero.
const DefaultMaxReadBytes = 32 << 20

// ErrTooLarge reports a read that would have to hold more than
// [LocalFS.MaxReadBytes] in memory; the caller should ask for fewer lines.
var ErrTooLarge = errors.New("too large to read at once")

// LocalFS is the local disk seen through a workspace: the file system
// tools use when the editor does not offer fs/* (it has the method set of
// tools.FileSystem). Paths are absolute and already resolved by
// [Workspace.Resolve]. A missing file is an error matching
// [io/fs.ErrNotExist]. A LocalFS is safe for concurrent use.
type LocalFS struct {
	ws *Workspace
	// MaxReadBytes caps the bytes one ReadTextFile returns; a read that
	// would exceed it fails with an error wrapping [ErrTooLarge]. Zero
	// means [DefaultMaxReadBytes].
	MaxReadBytes int
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
				return "", fmt.Errorf("%s: %w (more than %d bytes)", path, ErrTooLarge, maxBytes)
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
