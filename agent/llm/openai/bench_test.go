package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dshd/dshd/agent/llm"
)

// benchStream builds a DeepSeek-shaped stream: reasoning, many small text
// deltas, one fragmented tool call, finish, usage and [DONE].
func benchStream() []byte {
	var b bytes.Buffer
	chunk := func(delta string, finish string) {
		fr := "null"
		if finish != "" {
			fr = `"` + finish + `"`
		}
		fmt.Fprintf(&b, `data: {"id":"chatcmpl-5f1a0c","object":"chat.completion.chunk","created":1760000000,"model":"deepseek-flash","system_fingerprint":"fp_8802369eaa_prod0623","choices":[{"index":0,"delta":%s,"logprobs":null,"finish_reason":%s}],"usage":null}`+"\n\n", delta, fr)
	}
	chunk(`{"role":"assistant","content":null,"reasoning_content":""}`, "")
	for i := range 40 {
		chunk(fmt.Sprintf(`{"content":null,"reasoning_content":"step %d of the plan "}`, i), "")
	}
	words := strings.Fields("Here is the change you asked for: the handler now checks the error and returns it")
	for i := range 300 {
		chunk(fmt.Sprintf(`{"content":" %s","reasoning_content":null}`, words[i%len(words)]), "")
	}
	chunk(`{"tool_calls":[{"index":0,"id":"call_00_abc","type":"function","function":{"name":"write_file","arguments":""}}]}`, "")
	for range 40 {
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\\tif err != nil {\\n"}}]}`, "")
	}
	chunk(`{"content":"","reasoning_content":null}`, "tool_calls")
	b.WriteString(`data: {"id":"chatcmpl-5f1a0c","object":"chat.completion.chunk","created":1760000000,"model":"deepseek-flash","choices":[],"usage":{"prompt_tokens":1200,"completion_tokens":500,"total_tokens":1700,"prompt_cache_hit_tokens":1024,"prompt_cache_miss_tokens":176,"completion_tokens_details":{"reasoning_tokens":120}}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// BenchmarkSSEReader measures the SSE framing alone.
func BenchmarkSSEReader(b *testing.B) {
	body := benchStream()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	r := bytes.NewReader(body)
	for b.Loop() {
		r.Reset(body)
		rd := newSSEReader(r, DefaultMaxAnswerBytes)
		for {
			if _, err := rd.next(); err != nil {
				break
			}
		}
	}
}

// BenchmarkParseStream measures the whole parse path: SSE framing, chunk
// decoding, tool-call accumulation and event delivery.
func BenchmarkParseStream(b *testing.B) {
	body := benchStream()
	c, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	r := bytes.NewReader(body)
	for b.Loop() {
		r.Reset(body)
		wd := newWatchdog(func(error) {}, Settings{})
		n := 0
		err := c.readSSE(ctx, ctx, ctx, r, wd, &decoder{max: c.opts.MaxAnswerBytes}, c.opts.Logger, func(llm.Event, error) bool {
			n++
			return true
		})
		if err != nil || n == 0 {
			b.Fatalf("err %v, %d events", err, n)
		}
	}
}

// firstReadBody records when its first byte is handed to the client.
type firstReadBody struct {
	r     *bytes.Reader
	first *atomic.Int64
}

func (f *firstReadBody) Read(p []byte) (int, error) {
	f.first.CompareAndSwap(0, time.Now().UnixNano())
	return f.r.Read(p)
}

func (f *firstReadBody) Close() error { return nil }

type bodyTransport struct {
	body  []byte
	first *atomic.Int64
}

func (t bodyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	io.Copy(io.Discard, req.Body)
	req.Body.Close()
	return &http.Response{
		StatusCode: 200,
		Header:     http.Header{"Content-Type": {"text/event-stream"}},
		Body:       &firstReadBody{r: bytes.NewReader(t.body), first: t.first},
		Request:    req,
	}, nil
}

// BenchmarkFirstText measures, through the whole client, the time from the
// first response byte to the first EventText (reported as ns/first-text).
func BenchmarkFirstText(b *testing.B) {
	body := benchStream()
	// Put the first text right after the role chunk, as a non-thinking
	// answer has it.
	first := []byte(`data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"deepseek-flash","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}],"usage":null}` + "\n\n")
	body = append(first, body...)
	var firstByte atomic.Int64
	c, err := New(Options{HTTPClient: &http.Client{Transport: bodyTransport{body: body, first: &firstByte}}})
	if err != nil {
		b.Fatal(err)
	}
	req := userReq("hi")
	req.Tools = []llm.ToolSpec{{Name: "read_file", Parameters: json.RawMessage(`{"type":"object"}`)}}
	var total time.Duration
	for b.Loop() {
		firstByte.Store(0)
		for ev, err := range c.Stream(context.Background(), req) {
			if err != nil {
				b.Fatal(err)
			}
			if ev.Kind == llm.EventText {
				total += time.Duration(time.Now().UnixNano() - firstByte.Load())
				break
			}
		}
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "ns/first-text")
}
