// wsconn.go: a WebSocket as a stream of lines — each text frame in is one
// line, each line out is one text frame.

package remote

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// streamFrameAt is the size past which a line being written is streamed as
// a fragmented message instead of being gathered into one frame.
const streamFrameAt = 64 << 10

// wsConn adapts a WebSocket to the line framing of acp/rpc. Read and Write
// may run concurrently; Write is called by one writer at a time.
type wsConn struct {
	ws     *websocket.Conn
	ctx    context.Context // ends with Close, so blocked reads and writes end
	cancel context.CancelFunc
	remote net.Addr

	// read side, used by the one reader
	cur       io.Reader // the text message being read; nil between messages
	pendingNL bool      // the message ended but its newline is not yet returned

	// write side, used by the one writer
	line []byte         // the start of a line not yet complete
	mw   io.WriteCloser // the fragmented message being written, or nil

	closeOnce sync.Once
	closeErr  error
	done      chan struct{}
}

func newWSConn(ws *websocket.Conn, remote net.Addr) *wsConn {
	ctx, cancel := context.WithCancel(context.Background())
	ws.SetReadLimit(-1) // acp/rpc caps each line and skips an oversized one without buffering it
	return &wsConn{ws: ws, ctx: ctx, cancel: cancel, remote: remote, done: make(chan struct{})}
}

// Read returns the bytes of the text frames, each frame followed by a
// newline, its own CR and LF bytes turned into spaces. Binary frames are
// ignored, as the RFD says.
func (c *wsConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if c.pendingNL {
			c.pendingNL = false
			p[0] = '\n'
			return 1, nil
		}
		if c.cur == nil {
			typ, r, err := c.ws.Reader(c.ctx)
			if err != nil {
				return 0, c.readError(err)
			}
			if typ != websocket.MessageText {
				if _, err := io.Copy(io.Discard, r); err != nil {
					return 0, c.readError(err)
				}
				continue
			}
			c.cur = r
		}
		n, err := c.cur.Read(p)
		for i, b := range p[:n] {
			if b == '\n' || b == '\r' {
				p[i] = ' '
			}
		}
		switch {
		case err == io.EOF:
			c.cur = nil
			if n < len(p) {
				p[n] = '\n'
				return n + 1, nil
			}
			c.pendingNL = true
			return n, nil
		case err != nil:
			return n, c.readError(err)
		}
		if n > 0 {
			return n, nil
		}
	}
}

// readError maps the end of the socket onto io.EOF: a close frame, a
// reset, or our own Close all end the stream the same way.
func (c *wsConn) readError(err error) error {
	var ce websocket.CloseError
	if errors.As(err, &ce) || c.ctx.Err() != nil || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
		return io.EOF
	}
	return err
}

// Write cuts p at newlines and sends each line as one text frame; a line
// longer than streamFrameAt is streamed as a fragmented message.
func (c *wsConn) Write(p []byte) (int, error) {
	total := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if err := c.writeChunk(chunk, i >= 0); err != nil {
			return total - len(p), err
		}
		if i < 0 {
			break
		}
		p = p[i+1:]
	}
	return total, nil
}

func (c *wsConn) writeChunk(chunk []byte, end bool) error {
	if c.mw == nil && len(c.line)+len(chunk) <= streamFrameAt {
		if !end {
			c.line = append(c.line, chunk...)
			return nil
		}
		msg := chunk
		if len(c.line) > 0 {
			msg = append(c.line, chunk...)
		}
		c.line = c.line[:0]
		if len(msg) == 0 {
			return nil
		}
		return c.writeErr(c.ws.Write(c.ctx, websocket.MessageText, msg))
	}
	if c.mw == nil {
		w, err := c.ws.Writer(c.ctx, websocket.MessageText)
		if err != nil {
			return c.writeErr(err)
		}
		c.mw = w
		if _, err := w.Write(c.line); err != nil {
			return c.writeErr(err)
		}
		c.line = c.line[:0]
	}
	if _, err := c.mw.Write(chunk); err != nil {
		return c.writeErr(err)
	}
	if end {
		err := c.mw.Close()
		c.mw = nil
		return c.writeErr(err)
	}
	return nil
}

func (c *wsConn) writeErr(err error) error {
	if err != nil && c.ctx.Err() != nil {
		return net.ErrClosed
	}
	return err
}

// Close ends the connection with a normal closure, waiting at most a
// second for the peer's close frame. It is safe to call more than once.
func (c *wsConn) Close() error {
	c.closeOnce.Do(func() {
		go func() {
			// The close handshake waits for the peer; a peer that never
			// answers is cut off.
			t := time.AfterFunc(time.Second, func() { _ = c.ws.CloseNow() })
			c.closeErr = c.ws.Close(websocket.StatusNormalClosure, "")
			t.Stop()
			c.cancel()
			close(c.done)
		}()
		<-c.done
	})
	return nil
}

// RemoteAddr names the peer in logs of hit limits.
func (c *wsConn) RemoteAddr() net.Addr { return c.remote }

// keepalive pings the peer every interval until the connection ends, so
// that proxies between us see traffic on an idle connection. A missing
// pong is not taken for a dead peer (a reader paused by backpressure does
// not read pongs either); a dead peer is found by TCP keepalive.
func (c *wsConn) keepalive(interval time.Duration) {
	if interval <= 0 {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(c.ctx, interval)
			_ = c.ws.Ping(ctx)
			cancel()
		}
	}
}
