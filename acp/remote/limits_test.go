// limits_test.go: the bounds of a Streamable HTTP connection's input —
// bodies read one at a time, the queue of messages the agent has not read,
// the size caps — checked in a synctest bubble, where "blocked" is a
// fact, not a timeout.

package remote

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
)

// trackedBody is a request body that records whether it was read.
type trackedBody struct {
	r    io.Reader
	read atomic.Bool
}

func (b *trackedBody) Read(p []byte) (int, error) {
	b.read.Store(true)
	return b.r.Read(p)
}

// inBubble serves a POST straight through h and returns its recorder;
// done is closed when the handler returned.
func inBubble(h *Handler, body io.Reader, hdr map[string]string) (rec *httptest.ResponseRecorder, done chan struct{}) {
	req := httptest.NewRequest(http.MethodPost, "/acp", body)
	req.Host = "127.0.0.1" // a handler without a token serves loopback only
	req.Header.Set("Content-Type", mimeJSON)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec, done = httptest.NewRecorder(), make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(rec, req)
	}()
	return rec, done
}

// postDone serves a POST through h and waits for its answer.
func postDone(h *Handler, body string, hdr map[string]string) *httptest.ResponseRecorder {
	rec, done := inBubble(h, strings.NewReader(body), hdr)
	<-done
	return rec
}

func finished(done chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

func echoOf(size int) string {
	return `{"jsonrpc":"2.0","id":5,"method":"echo","params":{"pad":"` + strings.Repeat("x", size) + `"}}`
}

func TestStreamableHTTP_AConnectionReadsOneBodyAtATimeAndWaitsWhileItsQueueIsFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newFakeAgent()
		h, err := NewHandler(Options{Serve: a.serve, MaxQueuedInput: 4 << 10})
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close(context.Background())
		rec := postDone(h, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, nil)
		if rec.Code != http.StatusOK {
			t.Fatalf("initialize: %d", rec.Code)
		}
		hdr := map[string]string{HeaderConnectionID: rec.Header().Get(HeaderConnectionID)}
		// The agent stops reading; what is POSTed now waits in the queue.
		if rec := postDone(h, `{"jsonrpc":"2.0","method":"hold"}`, hdr); rec.Code != http.StatusAccepted {
			t.Fatalf("hold: %d", rec.Code)
		}
		synctest.Wait()
		if rec := postDone(h, echoOf(3<<10), hdr); rec.Code != http.StatusAccepted { // an empty queue takes it
			t.Fatalf("the first message: %d", rec.Code)
		}
		_, second := inBubble(h, strings.NewReader(echoOf(3<<10)), hdr)
		synctest.Wait()
		third := &trackedBody{r: strings.NewReader(echoOf(10))}
		_, thirdDone := inBubble(h, third, hdr)
		synctest.Wait()
		if finished(second) {
			t.Fatal("a message over the queue's bound was taken while the agent read nothing")
		}
		if finished(thirdDone) || third.read.Load() {
			t.Fatal("a body was read while another of the same connection waited for room")
		}

		close(a.release)
		synctest.Wait()
		if !finished(second) || !finished(thirdDone) {
			t.Fatal("the waiting POSTs did not go on once the agent read again")
		}
	})
}

func TestStreamableHTTP_BodiesOverTheLimitsAre413AndLoggedOncePerConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		a := newFakeAgent()
		h, err := NewHandler(Options{Serve: a.serve, MaxMessageBytes: 1 << 10, MaxInitializeBytes: 256, Observer: &countingObserver{},
			Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close(context.Background())
		padded := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"pad":"` + strings.Repeat("x", 300) + `"}}`
		if rec := postDone(h, padded, nil); rec.Code != http.StatusRequestEntityTooLarge {
			t.Fatalf("an initialize over MaxInitializeBytes: %d, want 413", rec.Code)
		}
		rec := postDone(h, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, nil)
		hdr := map[string]string{HeaderConnectionID: rec.Header().Get(HeaderConnectionID)}
		for range 2 {
			if rec := postDone(h, echoOf(2<<10), hdr); rec.Code != http.StatusRequestEntityTooLarge {
				t.Fatalf("a message over MaxMessageBytes: %d, want 413", rec.Code)
			}
		}
		if rec := postDone(h, echoOf(10), hdr); rec.Code != http.StatusAccepted {
			t.Fatalf("the next message: %d, want 202", rec.Code)
		}
		if n := strings.Count(logs.String(), "limit=1024"); n != 1 {
			t.Errorf("two refusals on one connection logged %d times, want once:\n%s", n, &logs)
		}
		if n := strings.Count(logs.String(), "limit=256"); n != 1 {
			t.Errorf("the refused initialize logged %d times, want once:\n%s", n, &logs)
		}
	})
}

// Past MaxStreams session streams, a connection's further sessions speak
// on its connection stream: the cap is the daemon's sessions per
// connection, not a constant.
func TestStreamableHTTP_SessionsPastMaxStreamsUseTheConnectionStream(t *testing.T) {
	_, _, u := newServer(t, Options{MaxStreams: 1})
	id := initialize(t, u)
	conn := openSSE(t, u, map[string]string{HeaderConnectionID: id})
	s1 := openSSE(t, u, map[string]string{HeaderConnectionID: id, HeaderSessionID: "s1"})
	for i, sid := range []string{"s1", "s2"} {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/load","params":{"sessionId":%q,"cwd":"/","mcpServers":[]}}`, 10+i, sid)
		if r := post(t, u, body, map[string]string{HeaderConnectionID: id, HeaderSessionID: sid}); r.StatusCode != http.StatusAccepted {
			t.Fatalf("session/load %s POST: %d", sid, r.StatusCode)
		}
	}
	// s1 has the one session stream; s2's replay comes on the connection
	// stream, before its answer.
	replayed := false
	for {
		e := conn.next(t)
		if strings.Contains(e, `"sessionId":"s1"`) {
			t.Fatalf("s1's update came on the connection stream: %s", e)
		}
		if strings.Contains(e, `"sessionId":"s2"`) && strings.Contains(e, `"text":"replayed"`) {
			replayed = true
		}
		if strings.Contains(e, `"id":11`) {
			break
		}
	}
	if !replayed {
		t.Fatal("s2's replay did not come on the connection stream before its answer")
	}
	if e := s1.next(t); !strings.Contains(e, `"sessionId":"s1"`) || !strings.Contains(e, `"text":"replayed"`) {
		t.Fatalf("s1's stream: %s", e)
	}
}
