package rpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/internal/testkit"
)

// watchdog fails the test with a goroutine dump instead of hanging forever;
// it is a deadlock guard, never a timing assertion.
const watchdog = 20 * time.Second

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// linePeer is the far end of a stream: it writes raw lines in and reads
// raw lines out.
type linePeer struct {
	t     *testing.T
	in    io.Writer
	lines chan string
}

// readLines sends each line of r, without its newline, to p.lines until r
// fails, then closes p.lines.
func (p *linePeer) readLines(r io.Reader) {
	defer close(p.lines)
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		l, err := br.ReadString('\n')
		if err != nil {
			return
		}
		p.lines <- strings.TrimSuffix(l, "\n")
	}
}

func (p *linePeer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatalf("send: %v", err)
	}
}

func (p *linePeer) recv() string {
	p.t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			p.t.Fatal("output closed")
		}
		return l
	case <-time.After(watchdog):
		buf := make([]byte, 1<<20)
		p.t.Fatalf("no output line\n%s", buf[:runtime.Stack(buf, true)])
	}
	return ""
}

// expect reads the next line and compares it as JSON, numbers exactly.
func (p *linePeer) expect(want string) {
	p.t.Helper()
	got := p.recv()
	if !jsonEqual(got, want) {
		p.t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func jsonEqual(a, b string) bool {
	decode := func(s string) (any, bool) {
		d := json.NewDecoder(strings.NewReader(s))
		d.UseNumber()
		var v any
		return v, d.Decode(&v) == nil
	}
	va, ok1 := decode(a)
	vb, ok2 := decode(b)
	return ok1 && ok2 && reflect.DeepEqual(va, vb)
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Logf("%s", bytes.TrimRight(b, "\n"))
	return len(b), nil
}

// newEchoPeer serves a Stream whose request hook answers every request
// with its method name, reading until the input ends.
func newEchoPeer(t *testing.T, opts *StreamOptions) *linePeer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	if opts == nil {
		opts = &StreamOptions{}
	}
	opts.Logger = testLogger(t)
	s := NewStream(inR, outW, closerFunc(func() error {
		inR.Close()
		return outW.Close()
	}), opts)
	s.onRequest = func(id json.RawMessage, method string, _ json.RawMessage) {
		if err := s.writeResponse(id, method, nil); err != nil {
			t.Errorf("answer %s: %v", method, err)
		}
	}
	read := make(chan struct{})
	go func() {
		defer close(read)
		for {
			var v json.RawMessage
			if s.ReadObject(&v) != nil {
				s.Close()
				return
			}
		}
	}()
	p := &linePeer{t: t, in: inW, lines: make(chan string, 64)}
	go p.readLines(outR)
	t.Cleanup(func() {
		inW.Close()
		<-read
		for range p.lines {
		}
	})
	return p
}

const ping = `{"jsonrpc":"2.0","id":1,"method":"ping"}`
const pong = `{"jsonrpc":"2.0","id":1,"result":"ping"}`

func TestStreamAnswersBadLinesAndKeepsServing(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string // lines written in answer, before the next valid request's answer
	}{
		{"garbage", `{not json`, []string{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`}},
		{"truncated object", `{"jsonrpc":"2.0","id":3,"method":"x"`, []string{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`}},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`,
			[]string{`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request","data":{"reason":"batches are not supported"}}}`}},
		{"empty batch", `[]`, []string{`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request","data":{"reason":"batches are not supported"}}}`}},
		{"number", `42`, []string{`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request","data":{"reason":"message must be a JSON object"}}}`}},
		{"null", `null`, []string{`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request","data":{"reason":"message must be a JSON object"}}}`}},
		{"missing jsonrpc", `{"id":5,"method":"ping"}`, []string{`{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"Invalid request","data":{"reason":"jsonrpc must be \"2.0\""}}}`}},
		{"wrong jsonrpc", `{"jsonrpc":"1.0","id":"a","method":"ping"}`, []string{`{"jsonrpc":"2.0","id":"a","error":{"code":-32600,"message":"Invalid request","data":{"reason":"jsonrpc must be \"2.0\""}}}`}},
		{"notification without jsonrpc", `{"method":"note"}`, []string{`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request","data":{"reason":"jsonrpc must be \"2.0\""}}}`}},
		{"method not a string", `{"jsonrpc":"2.0","id":6,"method":3}`, []string{`{"jsonrpc":"2.0","id":6,"error":{"code":-32600,"message":"Invalid request","data":{"reason":"method must be a string"}}}`}},
		{"neither request nor response", `{"jsonrpc":"2.0","id":9}`, []string{`{"jsonrpc":"2.0","id":9,"error":{"code":-32600,"message":"Invalid request","data":{"reason":"message is neither a request nor a response"}}}`}},
		{"empty object", `{}`, []string{`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request","data":{"reason":"message is neither a request nor a response"}}}`}},
		{"params not structured", `{"jsonrpc":"2.0","id":11,"method":"ping","params":5}`, []string{`{"jsonrpc":"2.0","id":11,"error":{"code":-32600,"message":"Invalid request","data":{"reason":"params must be an object or an array"}}}`}},
		{"request with result", `{"jsonrpc":"2.0","id":12,"method":"ping","result":1}`, []string{`{"jsonrpc":"2.0","id":12,"error":{"code":-32600,"message":"Invalid request","data":{"reason":"a request must not carry result or error"}}}`}},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, []string{`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request","data":{"reason":"id must be a string, an integer or null"}}}`}},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, []string{`{"jsonrpc":"2.0","id":1.5,"error":{"code":-32600,"message":"Invalid request","data":{"reason":"id must be a string, an integer or null"}}}`}},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"p\xff\"}", []string{`{"jsonrpc":"2.0","id":10,"error":{"code":-32600,"message":"Invalid request","data":{"reason":"message is not valid UTF-8"}}}`}},
		{"response with null id", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`, nil},
		{"response to an unknown id", `{"jsonrpc":"2.0","id":77,"result":{}}`, nil},
		{"response with negative id", `{"jsonrpc":"2.0","id":-1,"result":{}}`, nil},
		{"notification", `{"jsonrpc":"2.0","method":"note","params":{}}`, nil},
		{"blank and whitespace lines", "\n   \t\r", nil},
		{"crlf line", "{\"jsonrpc\":\"2.0\",\"id\":\"c\",\"method\":\"crlf\"}\r", []string{`{"jsonrpc":"2.0","id":"c","result":"crlf"}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newEchoPeer(t, nil)
			p.send(tt.in)
			for _, w := range tt.want {
				p.expect(w)
			}
			p.send(ping)
			p.expect(pong)
		})
	}
}

func TestStreamRestoresEveryIDExactly(t *testing.T) {
	ids := []string{`"7"`, `7`, `0`, `null`, `-5`, `-9223372036854775808`, `9223372036854775807`,
		`18446744073709551615`, `123456789012345678901234567890`, `""`, `"\u00e9\n"`}
	p := newEchoPeer(t, nil)
	for _, id := range ids {
		p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
		want := `{"jsonrpc":"2.0","id":` + id + `,"result":"ping"}`
		got := p.recv()
		if !jsonEqual(got, want) {
			t.Errorf("id %s: got %s", id, got)
		}
		// Byte-exact for numbers: no float rounding, no re-typing.
		if id[0] != '"' && !strings.Contains(got, `"id":`+id+`,`) {
			t.Errorf("id %s not restored byte for byte: %s", id, got)
		}
	}
}

func TestStreamServesALineOfFiftyMiB(t *testing.T) {
	size := 50 << 20
	if raceEnabled || testing.Short() {
		size = 2 << 20 // still dozens of read buffers
	}
	p := newEchoPeer(t, nil)
	line := make([]byte, 0, size+64)
	line = append(line, `{"jsonrpc":"2.0","id":2,"method":"big","params":{"s":"`...)
	line = append(line, bytes.Repeat([]byte("x"), size)...)
	line = append(line, "\"}}\n"...)
	if _, err := p.in.Write(line); err != nil {
		t.Fatal(err)
	}
	p.expect(`{"jsonrpc":"2.0","id":2,"result":"big"}`)
}

func TestStreamSkipsALineOverTheLimit(t *testing.T) {
	p := newEchoPeer(t, &StreamOptions{Limits: Limits{MaxLineSize: 1024}})
	p.send(`{"jsonrpc":"2.0","id":3,"method":"x","params":{"s":"` + strings.Repeat("y", 10<<10) + `"}}`)
	p.expect(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request","data":{"reason":"line exceeds the limit of 1024 bytes"}}}`)
	p.send(`{"jsonrpc":"2.0","id":4,"method":"x","params":{"s":"` + strings.Repeat("y", 900) + `"}}`)
	p.expect(`{"jsonrpc":"2.0","id":4,"result":"x"}`)
}

var zeds = bytes.Repeat([]byte("z"), 64<<10)

// endlessLine yields n bytes of one line, then a newline, without holding
// them in memory.
type endlessLine struct{ n int }

func (r *endlessLine) Read(b []byte) (int, error) {
	if r.n < 0 {
		return 0, io.EOF
	}
	if r.n == 0 {
		b[0] = '\n'
		r.n = -1
		return 1, nil
	}
	k := copy(b[:min(len(b), r.n)], zeds)
	r.n -= k
	return k, nil
}

func TestStreamDoesNotBufferAnOverlongLine(t *testing.T) {
	var out bytes.Buffer
	s := NewStream(&endlessLine{n: 64 << 20}, &out, nil, &StreamOptions{Limits: Limits{MaxLineSize: 1 << 20}})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var v json.RawMessage
	if err := s.ReadObject(&v); err != io.EOF {
		t.Fatalf("ReadObject = %v, want EOF", err)
	}
	runtime.ReadMemStats(&after)
	s.Close()
	if grown := after.TotalAlloc - before.TotalAlloc; grown > 16<<20 {
		t.Errorf("reading a 64 MiB line allocated %d MiB", grown>>20)
	}
	if !strings.Contains(out.String(), "line exceeds the limit") {
		t.Errorf("no -32600 for the long line: %q", out.String())
	}
}

func TestStreamWritesOneCompactLinePerMessage(t *testing.T) {
	var out bytes.Buffer
	s := NewStream(strings.NewReader(""), &out, nil, nil)
	if err := s.WriteNotification(acp.MethodSessionUpdate, &acp.SessionNotification{SessionID: "s",
		Update: &acp.AgentMessageChunk{Content: acp.TextBlock("two\nlines <b>&")}}); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteNotification("ping", nil); err != nil {
		t.Fatal(err)
	}
	s.Close() // writes what is queued
	want := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"two\nlines <b>&"}}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"ping"}` + "\n"
	if out.String() != want {
		t.Errorf("got  %q\nwant %q", out.String(), want)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

func TestStreamWriteErrorClosesTheStream(t *testing.T) {
	closed := make(chan struct{})
	s := NewStream(strings.NewReader(""), failingWriter{}, closerFunc(func() error { close(closed); return nil }), nil)
	// The line is queued; the writer's failure then closes the stream.
	if err := s.WriteNotification("x", nil); err != nil {
		t.Fatal(err)
	}
	<-closed
	if err := s.WriteNotification("x", nil); err == nil {
		t.Fatal("write after a broken pipe succeeded")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestWriteNotificationWritesTheGenericEncoding(t *testing.T) {
	for _, n := range []*acp.SessionNotification{
		{SessionID: "s<1>", Update: &acp.ToolCall{ToolCallID: "t&", Title: "a\nb <c>", RawInput: json.RawMessage(`{"x": "<y>"}`)}},
		{SessionID: "s", Update: &acp.AgentMessageChunk{Content: acp.TextBlock("fast <path>\u2028")}},
	} {
		var out bytes.Buffer
		s := NewStream(nil, &out, nil, nil)
		if err := s.WriteNotification(acp.MethodSessionUpdate, n); err != nil {
			t.Fatal(err)
		}
		s.Close()
		want := `{"jsonrpc":"2.0","method":"session/update","params":` + string(testkit.EncodeJSON(t, n)) + "}\n"
		if out.String() != want {
			t.Errorf("got  %s\nwant %s", out.String(), want)
		}
	}
}

// WriteObject writes a jsonrpc2 message's own encoding, byte for byte what
// json.Marshal of it gives (HTML escaped, compact), without marshalling it
// a second time.
func TestWriteObjectWritesWhatJSONMarshalGives(t *testing.T) {
	req := &jsonrpc2.Request{Method: "session/prompt", ID: jsonrpc2.ID{Num: 7}}
	if err := req.SetParams(map[string]any{"prompt": []any{map[string]any{"type": "text", "text": "a <b> & \"c\"\n\u2028 é"}}, "sessionId": "s"}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	s := NewStream(nil, &out, nil, nil)
	if err := s.WriteObject(req); err != nil {
		t.Fatal(err)
	}
	s.Close()
	want, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != string(want)+"\n" {
		t.Errorf("got  %s\nwant %s", out.String(), want)
	}
}
