package openai

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/agent/llm/llmtest"
	"github.com/dshd/dshd/agent/llm/openai/openaitest"
)

func TestHTTPErrorsAreNotRetried(t *testing.T) {
	tests := []struct {
		name     string
		reply    openaitest.Reply
		status   int
		contains string
		excludes string
	}{
		{
			name: "400 surfaces the server's message",
			reply: openaitest.Reply{Status: 400, Error: &openaitest.Error{
				Message: "The `reasoning_content` in the thinking mode must be passed back to the API.",
				Type:    "invalid_request_error", Code: "invalid_request_error"}},
			status:   400,
			contains: "reasoning_content",
		},
		{
			// The key's pieces are out of it (TestUnauthorized_…); what
			// the server masked itself stays.
			name:     "401 says the key was refused, with the server's reason",
			reply:    openaitest.Status(401),
			status:   401,
			contains: "the server refused the API key (server: Authentication Fails, Your api key: ****abcd is invalid)",
		},
		{
			name:     "402 says the balance is exhausted",
			reply:    openaitest.Status(402),
			status:   402,
			contains: "balance",
		},
		{
			name:     "422 surfaces the server's message",
			reply:    openaitest.Status(422),
			status:   422,
			contains: "temperature",
		},
		{
			name: "429 insufficient_quota is not a rate limit",
			reply: openaitest.Reply{Status: 429, RetryAfter: "1", Error: &openaitest.Error{
				Message: "You exceeded your current quota", Type: "insufficient_quota", Code: "insufficient_quota"}},
			status:   429,
			contains: "quota",
		},
		{
			name:     "a plain-text error body is kept",
			reply:    openaitest.Reply{Status: 400, Body: "bad things"},
			status:   400,
			contains: "bad things",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.srv.Enqueue(tt.reply, openaitest.Text("never sent"))
			_, err := h.run(t.Context(), userReq("hi"))
			e := apiError(t, err)
			if e.Status != tt.status || e.Retryable() {
				t.Errorf("status %d retryable %v, want %d not retryable", e.Status, e.Retryable(), tt.status)
			}
			if !strings.Contains(err.Error(), tt.contains) {
				t.Errorf("error %q does not contain %q", err, tt.contains)
			}
			if tt.excludes != "" && strings.Contains(err.Error(), tt.excludes) {
				t.Errorf("error %q contains %q", err, tt.excludes)
			}
			if strings.Contains(err.Error(), "sk-test-secret-key") || strings.Contains(e.Body, "sk-test-secret-key") {
				t.Errorf("error leaks the API key: %q / %q", err, e.Body)
			}
			if n := len(h.srv.ChatRequests()); n != 1 {
				t.Errorf("requests = %d, want 1", n)
			}
		})
	}
}

func TestRetries(t *testing.T) {
	future := openaitest.HTTPDate(time.Now().Add(30 * time.Second))
	tests := []struct {
		name       string
		replies    []openaitest.Reply
		maxRetries int
		wantOK     bool
		wantReqs   int
		checkWaits func(t *testing.T, waits []time.Duration)
	}{
		{
			name:     "429, 429, 200 honours Retry-After in seconds",
			replies:  []openaitest.Reply{{Status: 429, RetryAfter: "7"}, {Status: 429, RetryAfter: "0.25"}, openaitest.Text("ok")},
			wantOK:   true,
			wantReqs: 3,
			checkWaits: func(t *testing.T, waits []time.Duration) {
				if len(waits) != 2 || waits[0] != 7*time.Second || waits[1] != 250*time.Millisecond {
					t.Errorf("waits = %v, want [7s 250ms]", waits)
				}
			},
		},
		{
			name:     "503 honours Retry-After as an HTTP date",
			replies:  []openaitest.Reply{{Status: 503, RetryAfter: future}, openaitest.Text("ok")},
			wantOK:   true,
			wantReqs: 2,
			checkWaits: func(t *testing.T, waits []time.Duration) {
				if len(waits) != 1 || waits[0] < 20*time.Second || waits[0] > 31*time.Second {
					t.Errorf("waits = %v, want about 30s", waits)
				}
			},
		},
		{
			name:     "500 without Retry-After backs off exponentially with jitter",
			replies:  []openaitest.Reply{openaitest.Status(500), openaitest.Status(500), openaitest.Status(500), openaitest.Text("ok")},
			wantOK:   true,
			wantReqs: 4,
			checkWaits: func(t *testing.T, waits []time.Duration) {
				if len(waits) != 3 {
					t.Fatalf("waits = %v, want 3", waits)
				}
				for i, w := range waits {
					hi := DefaultRetryBaseDelay << i
					if w < hi/2 || w > hi {
						t.Errorf("wait %d = %v, want in [%v, %v]", i, w, hi/2, hi)
					}
				}
			},
		},
		{
			name:       "the retry cap returns the last error",
			replies:    []openaitest.Reply{openaitest.Status(503), openaitest.Status(503), openaitest.Status(503), openaitest.Text("never")},
			maxRetries: 2,
			wantReqs:   3,
		},
		{
			name:     "a Retry-After beyond 30s is returned, not waited",
			replies:  []openaitest.Reply{{Status: 429, RetryAfter: "3600"}, openaitest.Text("never")},
			wantReqs: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, func(o *Options) { o.MaxRetries = tt.maxRetries })
			h.srv.Enqueue(tt.replies...)
			evs, err := h.run(t.Context(), userReq("hi"))
			if tt.wantOK {
				if err != nil {
					t.Fatal(err)
				}
				if msg, _, _ := collect(t, evs); msg.Content != "ok" {
					t.Errorf("text = %q", msg.Content)
				}
			} else {
				e := apiError(t, err)
				if !e.Retryable() {
					t.Errorf("the last error should still say it is retryable: %v", e)
				}
			}
			if n := len(h.srv.ChatRequests()); n != tt.wantReqs {
				t.Errorf("requests = %d, want %d", n, tt.wantReqs)
			}
			if tt.checkWaits != nil {
				tt.checkWaits(t, h.recordedSleeps())
			}
		})
	}
}

func TestRetryAfterIsReallyWaited(t *testing.T) {
	h := newHarness(t, nil)
	h.c.sleep = llm.Sleep
	h.srv.Enqueue(openaitest.Reply{Status: 429, RetryAfter: "0.01"}, openaitest.Text("ok"))
	if _, err := h.run(t.Context(), userReq("hi")); err != nil {
		t.Fatal(err)
	}
}

func TestConnectionErrorsAreRetried(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	h := newHarness(t, func(o *Options) { o.BaseURL = "http://" + addr; o.MaxRetries = 2 })
	_, err = h.run(t.Context(), userReq("hi"))
	e := apiError(t, err)
	if e.Status != 0 || !e.Retryable() || e.Unwrap() == nil {
		t.Errorf("err = %+v, want a retryable connection error with its cause", e)
	}
	if n := len(h.recordedSleeps()); n != 2 {
		t.Errorf("retries = %d, want 2", n)
	}
}

func TestTimeouts(t *testing.T) {
	never := make(chan struct{}) // a hold that is never released
	tests := []struct {
		name   string
		reply  openaitest.Reply
		opts   func(*Options)
		wantIs error
		wantOK bool
	}{
		{
			name:   "only keep-alives before the first data event",
			reply:  openaitest.Reply{Hold: never, KeepAliveInterval: time.Millisecond},
			opts:   func(o *Options) { o.FirstTokenTimeout = 50 * time.Millisecond },
			wantIs: ErrFirstTokenTimeout,
		},
		{
			name:   "only keep-alives after some text",
			reply:  openaitest.Reply{Text: []string{"a"}, NoFinish: true, NoDone: true, KeepAliveForever: true, KeepAliveInterval: time.Millisecond},
			opts:   func(o *Options) { o.IdleTimeout = 50 * time.Millisecond },
			wantIs: ErrIdleTimeout,
		},
		{
			name:   "keep-alives forever after the finish still succeed",
			reply:  openaitest.Reply{Text: []string{"a"}, NoDone: true, KeepAliveForever: true, KeepAliveInterval: time.Millisecond},
			opts:   func(o *Options) { o.DoneTimeout = 30 * time.Millisecond },
			wantOK: true,
		},
		{
			name:   "the per-call cap ends a call that pings forever",
			reply:  openaitest.Reply{Hold: never, KeepAliveInterval: time.Millisecond},
			opts:   func(o *Options) { o.CallTimeout = 60 * time.Millisecond },
			wantIs: ErrCallTimeout,
		},
		{
			name:   "no response headers",
			reply:  openaitest.Reply{Hold: never, HoldHeaders: true},
			opts:   func(o *Options) { o.FirstByteTimeout = 50 * time.Millisecond },
			wantIs: ErrFirstByteTimeout,
		},
		{
			name:   "headers, then not a byte",
			reply:  openaitest.Reply{Hold: never},
			opts:   func(o *Options) { o.FirstByteTimeout = 50 * time.Millisecond },
			wantIs: ErrFirstByteTimeout,
		},
		{
			name:  "keep-alives count as a first byte; the first data event has its own bound",
			reply: openaitest.Reply{Hold: never, KeepAliveInterval: time.Millisecond},
			opts: func(o *Options) {
				o.FirstByteTimeout = time.Hour
				o.FirstTokenTimeout = 50 * time.Millisecond
			},
			wantIs: ErrFirstTokenTimeout,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.opts)
			h.srv.Enqueue(tt.reply)
			evs, err := h.run(t.Context(), userReq("hi"))
			if tt.wantOK {
				if err != nil || kinds(evs) != "TUF" {
					t.Fatalf("events %s, err %v; want TUF and success", kinds(evs), err)
				}
				return
			}
			if !errors.Is(err, tt.wantIs) {
				t.Fatalf("err = %v, want %v", err, tt.wantIs)
			}
			if n := len(h.srv.ChatRequests()); n != 1 {
				t.Errorf("requests = %d, want 1: timeouts are not retried", n)
			}
		})
	}
}

func TestCancel(t *testing.T) {
	t.Run("cancelling ctx mid-stream ends the stream with ctx's error", func(t *testing.T) {
		h := newHarness(t, nil)
		h.srv.Enqueue(openaitest.Reply{Text: []string{"a"}, NoFinish: true, NoDone: true,
			KeepAliveForever: true, KeepAliveInterval: time.Millisecond})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		llmtest.CancelledAtText(t, ctx, cancel, h.c, userReq("hi"))
	})
	t.Run("cancelling while waiting for the first token", func(t *testing.T) {
		h := newHarness(t, nil)
		release := make(chan struct{})
		arrived := make(chan struct{})
		h.srv.Handle(func(*openaitest.Request) openaitest.Reply {
			close(arrived)
			return openaitest.Reply{Hold: release, KeepAliveInterval: time.Millisecond, Text: []string{"late"}}
		})
		ctx, cancel := context.WithCancel(t.Context())
		go func() {
			<-arrived
			cancel()
		}()
		_, err := h.run(ctx, userReq("hi"))
		close(release)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
	t.Run("cancelling during a retry wait", func(t *testing.T) {
		h := newHarness(t, nil)
		h.srv.Enqueue(openaitest.Reply{Status: 429, RetryAfter: "20"})
		ctx, cancel := context.WithCancel(t.Context())
		h.c.sleep = func(ctx context.Context, d time.Duration) error {
			cancel()
			return llm.Sleep(ctx, d)
		}
		_, err := h.run(ctx, userReq("hi"))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
	t.Run("leaving the loop aborts the request", func(t *testing.T) {
		h := newHarness(t, nil)
		h.srv.Enqueue(openaitest.Reply{Text: []string{"a", "b"}, NoFinish: true, NoDone: true, KeepAliveForever: true})
		for ev, err := range h.c.Stream(t.Context(), userReq("hi")) {
			if err != nil {
				t.Fatal(err)
			}
			if ev.Kind == llm.EventText {
				break
			}
		}
		// goleak (TestMain) and srv.Close (which waits for the handler)
		// prove the stream is gone.
	})
}

func TestModels(t *testing.T) {
	h := newHarness(t, nil)
	h.srv.SetModels("deepseek-flash", "deepseek-v4-pro")
	infos, err := h.c.Models(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 2 || infos[0].ID != "deepseek-flash" || infos[1].ID != "deepseek-v4-pro" {
		t.Errorf("models = %+v", infos)
	}
	reqs := h.srv.Requests()
	if reqs[0].Method != http.MethodGet || reqs[0].Path != "/models" ||
		reqs[0].Header.Get("Authorization") != "Bearer sk-test-secret-key" {
		t.Errorf("request = %s %s %v", reqs[0].Method, reqs[0].Path, reqs[0].Header)
	}

	h.srv.RequireAPIKey("another-key")
	_, err = h.c.Models(t.Context())
	if e := apiError(t, err); e.Status != 401 {
		t.Errorf("status = %d, want 401", e.Status)
	}
}

func TestModelDiscovery(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		base := o.BaseURL
		*o = VLLM()
		o.BaseURL = base + "/v1/"
	})
	h.srv.SetModels("Qwen/Qwen3-8B", "other")
	h.srv.Enqueue(openaitest.Text("a"), openaitest.Text("b"))
	for range 2 {
		if _, err := h.run(t.Context(), userReq("hi")); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range h.srv.ChatRequests() {
		if c.Model != "Qwen/Qwen3-8B" {
			t.Errorf("model = %q, want the first listed", c.Model)
		}
	}
	if n := len(h.srv.Requests()); n != 3 {
		t.Errorf("requests = %d, want 3 (models fetched once)", n)
	}
}

func TestNewRejectsBadBaseURL(t *testing.T) {
	for _, u := range []string{"ftp://x", "not a url", "http://"} {
		if _, err := New(Options{BaseURL: u}); err == nil {
			t.Errorf("New(%q) succeeded", u)
		}
	}
}

func TestALongRetryAfterSaysHowLongTheServerAskedFor(t *testing.T) {
	h := newHarness(t, nil)
	h.srv.Enqueue(openaitest.Reply{Status: 429, RetryAfter: "600"}, openaitest.Text("never"))
	_, err := h.run(t.Context(), userReq("hi"))
	if err == nil || !strings.Contains(err.Error(), "10m0s") {
		t.Fatalf("err = %v, want it to say the server asked for 10m0s", err)
	}
	apiError(t, err) // still the server's error underneath
	if n := len(h.recordedSleeps()); n != 0 {
		t.Errorf("slept %d times, want none", n)
	}
}

// The error names the wait and the setting behind it: the daemon's flag,
// or, unnamed, the option itself.
func TestAFirstByteTimeoutNamesTheWait(t *testing.T) {
	for _, c := range []struct{ setting, want string }{
		{"--model-timeout", "openai: the model server sent nothing for 50ms (--model-timeout sets it)"},
		{"", "openai: the model server sent nothing for 50ms (FirstByteTimeout sets it)"},
	} {
		h := newHarness(t, func(o *Options) {
			o.FirstByteTimeout = 50 * time.Millisecond
			o.Settings.FirstByteTimeout = c.setting
		})
		h.srv.Enqueue(openaitest.Reply{Hold: make(chan struct{}), HoldHeaders: true})
		_, err := h.run(t.Context(), userReq("hi"))
		if err == nil || err.Error() != c.want {
			t.Fatalf("err = %v, want %q", err, c.want)
		}
	}
}
