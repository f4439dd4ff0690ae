// This file implements the fake ACP client: it runs an agent command on
// stdio, records every line both ways, answers the agent's requests through
// per-method handlers, and lets a case wait on what arrives.

package conformance

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dshd/dshd/conformance/internal/piped"
	"github.com/dshd/dshd/internal/within"
)

// Direction says who wrote a transcript line.
type Direction int

// Directions of a line.
const (
	// FromAgent is a line the agent wrote to its stdout (`<<`).
	FromAgent Direction = iota
	// ToAgent is a line the client wrote to the agent's stdin (`>>`).
	ToAgent
)

// String renders the direction in acp-v1.md notation.
func (d Direction) String() string {
	if d == ToAgent {
		return ">>"
	}
	return "<<"
}

// Line is one line of the exchange.
type Line struct {
	// Seq numbers the lines of one client, both directions, from 0.
	Seq int
	Dir Direction
	// Raw is the line without its newline; lines over 64 KiB the client
	// wrote are kept as a short description.
	Raw []byte
	// Size is the real length of the line in bytes.
	Size int
	// Msg is the decoded message; nil when the line is not JSON-RPC.
	Msg *Msg
	// Err says why an agent line is not a valid JSON-RPC message.
	Err error
	// ReplyTo is, for a response, the method of the request it answers.
	ReplyTo string
	// At is when the line was read or written.
	At time.Time
}

// String renders the line for failure details, shortened.
func (l *Line) String() string {
	return l.Dir.String() + " " + clip(l.Raw, 400)
}

// Handler answers one request the agent sent to the client. It returns the
// result, or an error to send instead.
type Handler func(ctx context.Context, c *Client, req *Msg) (any, *RPCError)

// ClientOptions configure one agent process and its client.
type ClientOptions struct {
	// Handlers answer the agent's requests by method. A method that is
	// present with a nil Handler is left for the case to answer with
	// [Client.Reply]; an absent method gets its baseline answer (see
	// baselineHandlers), or -32601.
	Handlers map[string]Handler
	// Script is the name of a scripted-model script under
	// testdata/scripts, for dshd-only cases.
	Script string
	// Args are extra arguments, for dshd-only cases.
	Args []string
	// Dir is the process's working directory (default: the target's).
	Dir string
	// Env adds environment variables.
	Env []string
}

// Client is a fake ACP client connected to one agent process.
type Client struct {
	index int
	cmd   *exec.Cmd
	stdin io.WriteCloser
	opts  ClientOptions

	wmu sync.Mutex // serializes writes to stdin

	mu       sync.Mutex
	lines    []*Line
	notify   chan struct{} // closed and replaced on every new line
	nextID   int64
	pending  map[string]string // request id → method, for client requests not yet answered
	answered map[string]bool
	mon      *monitor
	exited   bool

	stderr  *tailBuffer
	done    chan struct{} // closed when the process has exited and stdout is drained
	waitErr error

	hctx    context.Context
	hcancel context.CancelFunc
	hwg     sync.WaitGroup
}

// startClient launches argv and starts reading its output.
func startClient(index int, argv []string, dir string, env []string, opts ClientOptions) (*Client, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	setProcessGroup(cmd)
	cmd.WaitDelay = 3 * time.Second
	c := &Client{
		index:    index,
		cmd:      cmd,
		opts:     opts,
		notify:   make(chan struct{}),
		pending:  map[string]string{},
		answered: map[string]bool{},
		mon:      newMonitor(),
		stderr:   &tailBuffer{max: 64 << 10},
		done:     make(chan struct{}),
	}
	cmd.Stderr = c.stderr
	stdin, stdout, err := piped.Start(cmd)
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", argv[0], err)
	}
	c.stdin = stdin
	c.hctx, c.hcancel = context.WithCancel(context.Background())
	go c.readLoop(stdout)
	return c, nil
}

// baselineHandlers answer the client methods every client implements,
// whatever capabilities it advertised: session/request_permission is
// baseline (acp-v1 §13), so a case that does not care still answers it —
// declining, so that nothing the agent asks about runs.
var baselineHandlers = map[string]Handler{
	"session/request_permission": func(ctx context.Context, c *Client, req *Msg) (any, *RPCError) {
		return declineOutcome(req), nil
	},
}

// readLoop records stdout lines until EOF, then reaps the process.
func (c *Client) readLoop(stdout io.Reader) {
	defer close(c.done)
	r := bufio.NewReaderSize(stdout, 1<<16)
	var buf []byte
	for {
		chunk, err := r.ReadSlice('\n')
		buf = append(buf, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if len(buf) > 0 {
			complete := bytes.HasSuffix(buf, []byte("\n"))
			line := bytes.TrimSuffix(buf, []byte("\n"))
			c.received(bytes.Clone(line), complete)
			buf = buf[:0]
		}
		if err != nil {
			break
		}
	}
	err := c.cmd.Wait()
	c.hcancel()
	c.hwg.Wait()
	c.mu.Lock()
	c.waitErr = err
	c.exited = true
	c.broadcast()
	c.mu.Unlock()
}

// received records one agent line, checks it, and dispatches requests.
func (c *Client) received(line []byte, complete bool) {
	l := &Line{Dir: FromAgent, Raw: line, Size: len(line), At: time.Now()}
	switch trimmed := bytes.TrimSuffix(line, []byte("\r")); {
	case !complete:
		l.Err = errors.New("the last line has no terminating newline")
	case !utf8.Valid(line):
		l.Err = errors.New("the line is not valid UTF-8")
	case len(bytes.TrimSpace(trimmed)) == 0:
		l.Err = errors.New("an empty line")
	default:
		l.Msg, l.Err = parseMsg(trimmed)
	}
	c.mu.Lock()
	if l.Msg != nil && l.Err == nil && l.Msg.IsResponse() {
		key := l.Msg.IDKey()
		l.ReplyTo = c.pending[key]
		delete(c.pending, key)
	}
	c.appendLocked(l)
	c.mon.recv(l)
	var h Handler
	dispatch, manual := false, false
	if l.Err == nil && l.Msg.IsRequest() {
		var ok bool
		h, ok = c.opts.Handlers[l.Msg.Method]
		dispatch = true
		manual = ok && h == nil
		if !ok {
			h = baselineHandlers[l.Msg.Method]
		}
	}
	c.mu.Unlock()
	if !dispatch || manual {
		return
	}
	m := l.Msg
	c.hwg.Go(func() {
		if h == nil {
			c.ReplyError(m.ID, &RPCError{Code: -32601, Message: "Method not found", Data: mustJSON(map[string]string{"method": m.Method})})
			return
		}
		res, rerr := h(c.hctx, c, m)
		if rerr != nil {
			c.ReplyError(m.ID, rerr)
			return
		}
		c.Reply(m.ID, res)
	})
}

func (c *Client) appendLocked(l *Line) {
	l.Seq = len(c.lines)
	c.lines = append(c.lines, l)
	c.broadcast()
}

func (c *Client) broadcast() {
	close(c.notify)
	c.notify = make(chan struct{})
}

// WriteRaw writes one line (a newline is added) exactly as given.
func (c *Client) WriteRaw(line []byte) error {
	c.recordOut(line, len(line))
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := c.stdin.Write(append(bytes.Clone(line), '\n')); err != nil {
		return fmt.Errorf("writing to the agent: %w", err)
	}
	return nil
}

// WriteStream writes one huge line produced by fill (the newline is
// added), without holding it in memory; desc stands for it in the
// transcript, and method/id, when set, register the request it carries.
func (c *Client) WriteStream(desc string, method string, id json.RawMessage, fill func(w io.Writer) (int64, error)) error {
	c.mu.Lock()
	if method != "" && id != nil {
		c.pending[idKey(id)] = method
	}
	c.appendLocked(&Line{Dir: ToAgent, Raw: []byte(desc), Size: -1, At: time.Now()})
	c.mon.sendUnparsed() // a line past the agent's limit may get -32700 or -32600 with id null
	c.mu.Unlock()
	c.wmu.Lock()
	defer c.wmu.Unlock()
	bw := bufio.NewWriterSize(c.stdin, 1<<20)
	if _, err := fill(bw); err != nil {
		return fmt.Errorf("writing to the agent: %w", err)
	}
	if err := bw.WriteByte('\n'); err != nil {
		return fmt.Errorf("writing to the agent: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing to the agent: %w", err)
	}
	return nil
}

func (c *Client) recordOut(line []byte, size int) {
	l := &Line{Dir: ToAgent, Raw: line, Size: size, At: time.Now()}
	if len(line) > 64<<10 {
		l.Raw = []byte(clip(line, 200))
	}
	m, err := parseMsg(line)
	if err == nil {
		l.Msg = m
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil || !utf8.Valid(line) {
		c.mon.sendUnparsed()
	}
	switch {
	case l.Msg != nil && l.Msg.IsRequest():
		c.pending[l.Msg.IDKey()] = l.Msg.Method
	case err != nil && m != nil && m.ID != nil && !isNull(m.ID):
		// A malformed message with an id may be answered with that id.
		c.pending[m.IDKey()] = "(invalid message)"
	}
	c.appendLocked(l)
	if l.Msg != nil {
		c.mon.send(l.Msg)
	}
}

// Send writes a request with a fresh integer id and returns the id.
func (c *Client) Send(method string, params any) (json.RawMessage, error) {
	c.mu.Lock()
	id := json.RawMessage(fmt.Sprint(c.nextID))
	c.nextID++
	c.mu.Unlock()
	return id, c.SendID(id, method, params)
}

// SendID writes a request with the given raw id; nil params leave the
// member out (JSON-RPC 2.0 allows params to be omitted, never null).
func (c *Client) SendID(id json.RawMessage, method string, params any) error {
	return c.WriteRaw(mustJSON(envelope(map[string]any{"jsonrpc": "2.0", "id": id, "method": method}, params)))
}

// Notify writes a notification; nil params leave the member out.
func (c *Client) Notify(method string, params any) error {
	return c.WriteRaw(mustJSON(envelope(map[string]any{"jsonrpc": "2.0", "method": method}, params)))
}

// envelope adds params to a request or notification unless they are nil.
func envelope(m map[string]any, params any) map[string]any {
	if params != nil {
		m["params"] = mustJSON(params)
	}
	return m
}

// Reply answers one of the agent's requests with a result (nil is sent as
// null).
func (c *Client) Reply(id json.RawMessage, result any) error {
	if result == nil {
		result = json.RawMessage("null")
	}
	return c.WriteRaw(mustJSON(map[string]any{"jsonrpc": "2.0", "id": id, "result": mustJSON(result)}))
}

// ReplyError answers one of the agent's requests with an error.
func (c *Client) ReplyError(id json.RawMessage, e *RPCError) error {
	return c.WriteRaw(mustJSON(map[string]any{"jsonrpc": "2.0", "id": id, "error": e}))
}

// Await waits for the first agent line at or after seq for which match
// returns true. It fails when ctx ends or the agent exits first; what says
// what was awaited.
func (c *Client) Await(ctx context.Context, seq int, what string, match func(*Line) bool) (*Line, error) {
	for {
		// Lines never change once recorded, so match runs unlocked and may
		// look at the client itself.
		c.mu.Lock()
		lines, ch, exited := c.lines, c.notify, c.exited
		c.mu.Unlock()
		for ; seq < len(lines); seq++ {
			if l := lines[seq]; l.Dir == FromAgent && match(l) {
				return l, nil
			}
		}
		if exited {
			return nil, fmt.Errorf("the agent exited before %s (%s)", what, c.exitState())
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, fmt.Errorf("timed out waiting for %s", what)
		}
	}
}

// AwaitMsg is Await on decoded messages.
func (c *Client) AwaitMsg(ctx context.Context, seq int, what string, match func(*Msg) bool) (*Line, error) {
	return c.Await(ctx, seq, what, func(l *Line) bool { return l.Msg != nil && match(l.Msg) })
}

// Response waits for the response to the request with the given id.
func (c *Client) Response(ctx context.Context, id json.RawMessage) (*Line, error) {
	key := idKey(id)
	return c.AwaitMsg(ctx, 0, "the response to request "+key, func(m *Msg) bool {
		return m.IsResponse() && m.IDKey() == key
	})
}

// Call sends a request and waits for its response.
func (c *Client) Call(ctx context.Context, method string, params any) (*Msg, error) {
	id, err := c.Send(method, params)
	if err != nil {
		return nil, err
	}
	l, err := c.Response(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	return l.Msg, nil
}

// Do calls method and decodes a successful result into out (when not
// nil); an error response comes back as *RPCError.
func (c *Client) Do(ctx context.Context, method string, params, out any) error {
	m, err := c.Call(ctx, method, params)
	if err != nil {
		return err
	}
	if m.Error != nil {
		return m.Error
	}
	if out != nil {
		if raw, ok := out.(*json.RawMessage); ok {
			*raw = m.Result
			return nil
		}
		if err := json.Unmarshal(m.Result, out); err != nil {
			return fmt.Errorf("%s: decoding the result: %w", method, err)
		}
	}
	return nil
}

// Barrier sends a request the agent does not know and waits for its
// answer; it returns the answer's seq. Everything the agent wrote before
// handling the barrier is on record once Barrier returns, which is how a
// case checks that something did not happen without waiting on a clock.
func (c *Client) Barrier(ctx context.Context) (int, error) {
	c.mu.Lock()
	id := json.RawMessage(fmt.Sprintf(`"barrier-%d"`, c.nextID))
	c.nextID++
	c.mu.Unlock()
	if err := c.SendID(id, "_conformance/barrier", map[string]any{}); err != nil {
		return 0, err
	}
	l, err := c.Response(ctx, id)
	if err != nil {
		return 0, err
	}
	return l.Seq, nil
}

// Lines returns a snapshot of the transcript.
func (c *Client) Lines() []*Line {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*Line(nil), c.lines...)
}

// Seq is the seq the next line will get.
func (c *Client) Seq() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.lines)
}

// Messages returns the agent's decoded messages from seq on that match.
func (c *Client) Messages(seq int, match func(*Msg) bool) []*Line {
	var out []*Line
	for _, l := range c.Lines() {
		if l.Seq >= seq && l.Dir == FromAgent && l.Msg != nil && (match == nil || match(l.Msg)) {
			out = append(out, l)
		}
	}
	return out
}

// Updates returns the session/update lines for session sid from seq on
// ("" matches every session).
func (c *Client) Updates(seq int, sid string) []*Line {
	return c.Messages(seq, func(m *Msg) bool {
		return m.Method == "session/update" && (sid == "" || m.SessionID() == sid)
	})
}

// Stderr returns the tail of what the agent wrote to stderr.
func (c *Client) Stderr() string { return c.stderr.String() }

// Done is closed once the agent exited and its output was read.
func (c *Client) Done() <-chan struct{} { return c.done }

// ExitCode is the process's exit code, or -1 while it runs or when it was
// killed by a signal.
func (c *Client) ExitCode() int {
	select {
	case <-c.done:
		return c.cmd.ProcessState.ExitCode()
	default:
		return -1
	}
}

func (c *Client) exitState() string {
	if c.cmd.ProcessState == nil {
		return "running"
	}
	return c.cmd.ProcessState.String()
}

// CloseStdin closes the agent's stdin, as a client that goes away does.
func (c *Client) CloseStdin() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.stdin.Close()
}

// Shutdown closes stdin and waits for the agent to exit, killing its
// process group when it does not within grace.
func (c *Client) Shutdown(grace time.Duration) {
	// Closing stdin may block behind a stuck huge write; do it aside.
	go func() { _ = c.CloseStdin() }()
	if !within.Closed(c.done, grace) {
		c.Kill()
		<-c.done
	}
}

// Kill kills the agent's process group.
func (c *Client) Kill() {
	killProcessGroup(c.cmd)
}

// violations returns what the monitor found.
func (c *Client) violations() []Violation {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mon.finish()
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu    sync.Mutex
	max   int
	buf   []byte
	total int
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.total += len(p)
	b.buf = append(b.buf, p...)
	if len(b.buf) > b.max {
		b.buf = append(b.buf[:0], b.buf[len(b.buf)-b.max:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// Len is how many bytes were written in total.
func (b *tailBuffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total
}
