// The client: New, Stream with retries and timeouts, Models.

package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"math"
	"math/rand/v2"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dshd/dshd/agent/llm"
)

// Timeout errors. Each is returned wrapped, with the duration that ran out;
// test with errors.Is.
var (
	ErrFirstByteTimeout  = errors.New("openai: the model server sent nothing")
	ErrFirstTokenTimeout = errors.New("openai: no data from the model in time")
	ErrIdleTimeout       = errors.New("openai: stream idle for too long")
	ErrCallTimeout       = errors.New("openai: call took too long")
	errDoneTimeout       = errors.New("openai: no [DONE] after the finish reason")
	errConsumerGone      = errors.New("openai: consumer stopped")
)

// ErrAnswerTooLong is returned, wrapped with what passed which bound and
// the setting that sets it, by a call whose answer passed
// Options.MaxAnswerBytes; test with errors.Is.
var ErrAnswerTooLong = errors.New("openai: the model's answer is too long")

// passed is the part of an answer that passed its bound, as the decoder
// and the SSE reader find it; the call turns it into [ErrAnswerTooLong]
// with the bound and its setting (Client.tooLong).
type passed string

func (p passed) Error() string { return string(p) }

const (
	// passedAnswer: what the answer holds (Options.MaxAnswerBytes).
	passedAnswer passed = "its text, reasoning and tool calls"
	// passedEvent and passedBody: the bytes that carry at most one
	// answer, which may take twice the bound (JSON escapes, the envelope).
	passedEvent passed = "one event of its stream"
	passedBody  passed = "its body"
)

// carrierBytes bounds the bytes that carry one answer, escaped as JSON:
// one event of a stream, the body of a non-streamed answer.
func (c *Client) carrierBytes() int { return 2 * min(c.opts.MaxAnswerBytes, math.MaxInt/2) }

// tooLong is the error of a call whose answer passed its bound at p.
func (c *Client) tooLong(p passed) error {
	if p == passedAnswer {
		return fmt.Errorf("%w: %s passed %d bytes (%s sets it)", ErrAnswerTooLong, p, c.opts.MaxAnswerBytes, c.opts.Settings.MaxAnswerBytes)
	}
	return fmt.Errorf("%w: %s passed %d bytes, twice the answer's bound of %d (%s sets it)",
		ErrAnswerTooLong, p, c.carrierBytes(), c.opts.MaxAnswerBytes, c.opts.Settings.MaxAnswerBytes)
}

// Client is an OpenAI-compatible Chat Completions client. It implements
// [llm.Model] and [llm.Lister] and is safe for concurrent use.
type Client struct {
	opts     resolved
	http     *http.Client
	chatURL  string
	modelURL string
	// sleep waits between retries; tests replace it to observe the delays.
	sleep func(ctx context.Context, d time.Duration) error

	modelMu sync.Mutex
	model   string // discovered default model

	// answerLogged is set once an answer passed MaxAnswerBytes: the
	// log says so once per client, each call's error every time.
	answerLogged atomic.Bool
}

var (
	_ llm.Model  = (*Client)(nil)
	_ llm.Lister = (*Client)(nil)
)

// New returns a client for opts. It fails only on options that cannot work
// (a base URL that is not http or https).
func New(opts Options) (*Client, error) {
	r := resolve(opts)
	u, err := url.Parse(r.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openai: BaseURL %q is not an http(s) URL", r.BaseURL)
	}
	base := strings.TrimRight(r.BaseURL, "/")
	c := &Client{
		opts:     r,
		http:     r.HTTPClient,
		chatURL:  base + "/chat/completions",
		modelURL: base + "/models",
		sleep:    llm.Sleep,
		model:    r.DefaultModel,
	}
	if c.http == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.DialContext = (&net.Dialer{Timeout: r.ConnectTimeout, KeepAlive: 30 * time.Second}).DialContext
		t.TLSHandshakeTimeout = r.ConnectTimeout
		t.Proxy = http.ProxyFromEnvironment
		c.http = &http.Client{Transport: t}
	}
	return c, nil
}

// DefaultModel returns the model used when a request names none; empty
// until discovered when it comes from GET /models.
func (c *Client) DefaultModel() string {
	c.modelMu.Lock()
	defer c.modelMu.Unlock()
	return c.model
}

// ThinkingSwitch implements llm.ThinkingSwitch: only DeepSeek's thinking
// object turns thinking off (a reasoning effort cannot), so only a
// backend that sends it can switch; on is the --thinking setting.
func (c *Client) ThinkingSwitch() (on, ok bool) {
	return !c.opts.DisableThinking, c.opts.compat.Thinking == ThinkingObject
}

var _ llm.ThinkingSwitch = (*Client)(nil)

// CloseIdleConnections closes the idle connections of the client's
// transport (tests call it so no transport goroutine outlives them).
func (c *Client) CloseIdleConnections() { c.http.CloseIdleConnections() }

// modelFor resolves the model id of a request.
func (c *Client) modelFor(ctx context.Context, req *llm.Request) (string, error) {
	if req.Model != "" {
		return req.Model, nil
	}
	c.modelMu.Lock()
	defer c.modelMu.Unlock()
	if c.model != "" {
		return c.model, nil
	}
	infos, err := c.Models(ctx)
	if err != nil {
		return "", fmt.Errorf("openai: no model given and none discovered: %w", err)
	}
	if len(infos) == 0 {
		return "", errors.New("openai: no model given and GET /models lists none")
	}
	c.model = infos[0].ID
	return c.model, nil
}

// Stream sends one chat request and yields its events. Retries happen only
// before the response body is read, so nothing reaches the consumer twice.
// Leaving the loop aborts the request.
func (c *Client) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		if err := c.stream(ctx, req, yield); err != nil && !errors.Is(err, errConsumerGone) {
			yield(llm.Event{}, err)
		}
	}
}

func (c *Client) stream(ctx context.Context, req *llm.Request, yield func(llm.Event, error) bool) error {
	if req == nil {
		return errors.New("openai: nil request")
	}
	callCtx := ctx
	if c.opts.CallTimeout > 0 {
		var cancel context.CancelFunc
		callCtx, cancel = context.WithTimeoutCause(ctx, c.opts.CallTimeout,
			said(ErrCallTimeout, c.opts.CallTimeout, c.opts.Settings.CallTimeout))
		defer cancel()
	}
	model, err := c.modelFor(callCtx, req)
	if err != nil {
		return c.ctxErr(ctx, callCtx, err)
	}
	body, err := c.encode(req, model)
	if err != nil {
		return err
	}
	log := c.opts.Logger.With("provider", "openai", "model", model)
	log.LogAttrs(ctx, slog.LevelDebug, "model call",
		slog.Int("messages", len(req.Messages)), slog.Int("tools", len(req.Tools)), slog.Int("bytes", len(body)))
	for attempt := 0; ; attempt++ {
		err := c.attempt(ctx, callCtx, body, log, yield)
		if p, ok := err.(passed); ok {
			// Never retried: the server would stream the same again.
			if c.answerLogged.CompareAndSwap(false, true) {
				log.LogAttrs(ctx, slog.LevelWarn, "openai: the model's answer passed its bound; the call fails",
					slog.String("setting", c.opts.Settings.MaxAnswerBytes), slog.Int("limit", c.opts.MaxAnswerBytes), slog.String("at", string(p)))
			}
			return c.tooLong(p)
		}
		var apiErr *llm.APIError
		if err == nil || !errors.As(err, &apiErr) || !apiErr.Retryable() ||
			attempt >= c.opts.MaxRetries || !isPreBody(err) {
			return unwrapPreBody(err)
		}
		wait := c.backoff(attempt)
		if apiErr.RetryAfter > 0 {
			ra := time.Duration(apiErr.RetryAfter * float64(time.Second))
			if ra > maxRetryAfter {
				// Sleeping that long would look like a hang: say how long
				// the server wants instead, and let the caller decide.
				return fmt.Errorf("%w; the server asks to retry in %s, longer than dshd waits (%s): try again later",
					unwrapPreBody(err), ra.Round(time.Second), maxRetryAfter)
			}
			wait = ra
		}
		log.LogAttrs(ctx, slog.LevelWarn, "model call failed, retrying",
			slog.Int("attempt", attempt+1), slog.Duration("wait", wait), slog.Any("err", err))
		if serr := c.sleep(callCtx, wait); serr != nil {
			return c.ctxErr(ctx, callCtx, serr)
		}
	}
}

// preBodyError marks a failure that happened before any of the response
// body was consumed: the only failures a retry may follow.
type preBodyError struct{ error }

func (e preBodyError) Unwrap() error { return e.error }

func isPreBody(err error) bool {
	_, ok := err.(preBodyError)
	return ok
}

func unwrapPreBody(err error) error {
	if p, ok := err.(preBodyError); ok {
		return p.error
	}
	return err
}

// backoff returns base·2ⁿ capped, with jitter in its upper half.
func (c *Client) backoff(attempt int) time.Duration {
	d := c.opts.RetryBaseDelay << min(attempt, 20)
	if d > c.opts.RetryMaxDelay || d <= 0 {
		d = c.opts.RetryMaxDelay
	}
	if d <= 1 {
		return d
	}
	return d/2 + rand.N(d/2)
}

// ctxErr reports the right error once a context may be done: the caller's
// own ctx error first, then our call cap, then err itself.
func (c *Client) ctxErr(ctx, callCtx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if callCtx.Err() != nil {
		return context.Cause(callCtx)
	}
	return err
}

// attempt sends the request once and, on a 200, streams the answer.
func (c *Client) attempt(ctx, callCtx context.Context, body []byte, log *slog.Logger, yield func(llm.Event, error) bool) error {
	actx, cancel := context.WithCancelCause(callCtx)
	defer cancel(nil)
	wd := newWatchdog(cancel, c.opts.Settings)
	defer wd.stop()

	hreq, err := http.NewRequestWithContext(actx, http.MethodPost, c.chatURL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("openai: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	c.setHeaders(hreq.Header)

	wd.arm(c.opts.FirstByteTimeout, phaseFirstByte)
	resp, err := c.http.Do(hreq)
	if err != nil {
		if e := c.timeoutErr(ctx, callCtx, actx); e != nil {
			return e
		}
		return preBodyError{llm.NewAPIError(0, "connection_error",
			"cannot reach the model server: "+c.redact(err.Error()), "", true, err)}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		wd.stop()
		return preBodyError{c.httpError(resp)}
	}
	// The headers are not the answer: a server (or a proxy in front of it)
	// may send them and then nothing at all. Until the body's first byte
	// arrives — a keep-alive comment counts, it shows the server is at
	// work — the first-byte bound holds; from then on the first data
	// event has what is left of FirstTokenTimeout.
	headersAt := time.Now()
	wd.arm(c.opts.FirstByteTimeout, phaseFirstByte)
	rd := &firstByteReader{r: resp.Body, first: func() {
		d := c.opts.FirstTokenTimeout
		if d > 0 {
			d = max(d-time.Since(headersAt), time.Nanosecond)
		}
		wd.armRest(d, c.opts.FirstTokenTimeout, phaseFirstToken)
	}}

	dec := &decoder{max: c.opts.MaxAnswerBytes}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt == "application/json" {
		return c.readJSON(ctx, callCtx, actx, rd, dec, yield)
	}
	return c.readSSE(ctx, callCtx, actx, rd, wd, dec, log, yield)
}

// firstByteReader calls first once, when the first byte of r arrives.
type firstByteReader struct {
	r     io.Reader
	first func()
}

func (f *firstByteReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if n > 0 && f.first != nil {
		f.first()
		f.first = nil
	}
	return n, err
}

// timeoutErr names the error behind a failed read or Do once a context
// ended: the caller's cancellation, the call cap or one of our watchdogs.
// It returns nil when no context ended (a plain network failure).
func (c *Client) timeoutErr(ctx, callCtx, actx context.Context) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if callCtx.Err() != nil {
		return context.Cause(callCtx)
	}
	if actx.Err() != nil {
		return context.Cause(actx)
	}
	return nil
}

func (c *Client) readSSE(ctx, callCtx, actx context.Context, body io.Reader, wd *watchdog, dec *decoder, log *slog.Logger, yield func(llm.Event, error) bool) error {
	rd := newSSEReader(body, c.carrierBytes())
	var events []llm.Event
	for {
		data, err := rd.next()
		if err != nil {
			stop := c.timeoutErr(ctx, callCtx, actx)
			switch {
			case ctx.Err() != nil:
				return ctx.Err()
			case dec.finished:
				// The answer is complete; whatever broke the wait for
				// "[DONE]" (EOF, a reset, pings only) changes nothing.
				return c.finish(ctx, dec, yield)
			case stop != nil:
				return stop
			case err == passedEvent:
				return err
			case err == io.EOF:
				return fmt.Errorf("openai: stream closed early: %w", llm.ErrTruncated)
			default:
				return fmt.Errorf("%w: %w", llm.ErrTruncated, err)
			}
		}
		// A data event: the only thing that feeds the watchdog.
		if dec.finished {
			wd.arm(c.opts.DoneTimeout, phaseDone)
		} else {
			wd.arm(c.opts.IdleTimeout, phaseIdle)
		}
		if isDone(data) {
			if !dec.finished {
				return fmt.Errorf("openai: [DONE] without a finish reason: %w", llm.ErrTruncated)
			}
			return c.finish(ctx, dec, yield)
		}
		events, err = dec.feed(data, events[:0])
		if err == nil && dec.finished {
			wd.arm(c.opts.DoneTimeout, phaseDone)
		}
		if len(events) > 0 {
			// The consumer's time is not the server's silence.
			wd.pause()
			for _, ev := range events {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if !yield(ev, nil) {
					return errConsumerGone
				}
			}
			wd.resume()
		}
		if err != nil {
			var apiErr *llm.APIError
			if errors.As(err, &apiErr) {
				log.LogAttrs(ctx, slog.LevelWarn, "model stream failed", slog.Any("err", err))
			}
			return err
		}
	}
}

func isDone(data []byte) bool {
	return string(bytes.TrimSpace(data)) == "[DONE]"
}

// finish yields the usage (if the server sent any) and the finish event.
func (c *Client) finish(ctx context.Context, dec *decoder, yield func(llm.Event, error) bool) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if dec.usage != nil {
		if !yield(llm.Event{Kind: llm.EventUsage, Usage: dec.usage}, nil) {
			return errConsumerGone
		}
	}
	if !yield(llm.Event{Kind: llm.EventFinish, Finish: dec.finish}, nil) {
		return errConsumerGone
	}
	return nil
}

func (c *Client) readJSON(ctx, callCtx, actx context.Context, body io.Reader, dec *decoder, yield func(llm.Event, error) bool) error {
	// One byte past the bound tells a body over it from one that ends
	// there: a cut body is never decoded as if it were whole.
	data, err := io.ReadAll(io.LimitReader(body, int64(c.carrierBytes())+1))
	if err != nil {
		if e := c.timeoutErr(ctx, callCtx, actx); e != nil {
			return e
		}
		return fmt.Errorf("%w: %w", llm.ErrTruncated, err)
	}
	if len(data) > c.carrierBytes() {
		return passedBody
	}
	events, err := dec.decodeCompletion(data)
	for _, ev := range events {
		if !yield(ev, nil) {
			return errConsumerGone
		}
	}
	if err != nil {
		return err
	}
	return c.finish(ctx, dec, yield)
}

// httpError reads an error response into an *llm.APIError.
func (c *Client) httpError(resp *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	body := c.redact(string(raw))
	var env struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	var w wireError
	if json.Unmarshal(bytes.TrimSpace(raw), &env) == nil {
		switch {
		case len(env.Error) > 0 && env.Error[0] == '{':
			_ = json.Unmarshal(env.Error, &w)
		case len(env.Error) > 0 && env.Error[0] == '"':
			_ = json.Unmarshal(env.Error, &w.Message)
		default:
			w.Message = env.Message
		}
	}
	code := w.code()
	msg := c.redact(w.text())
	if msg == "" {
		msg = strings.TrimSpace(body)
		if msg == "" || len(msg) > 300 {
			msg = http.StatusText(resp.StatusCode)
		}
	}
	retryable := false
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		msg = c.refusedKey(c.redactPieces(msg))
	case http.StatusPaymentRequired:
		msg = "insufficient balance: the account's balance is exhausted, top it up to continue (server: " + msg + ")"
	case http.StatusTooManyRequests:
		if code == "insufficient_quota" || w.Type == "insufficient_quota" {
			msg = "quota exhausted: " + msg
		} else {
			retryable = true
		}
	case http.StatusRequestTimeout, http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		retryable = true
	}
	e := llm.NewAPIError(resp.StatusCode, code, msg, body, retryable, nil)
	e.RetryAfter = retryAfter(resp.Header, time.Now())
	return e
}

// retryAfter reads Retry-After (seconds or an HTTP date) or OpenAI's
// retry-after-ms, in seconds; 0 when absent or unreadable.
func retryAfter(h http.Header, now time.Time) float64 {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return ms / 1000
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		return max(s, 0)
	}
	if t, err := http.ParseTime(v); err == nil {
		// Below a second the date's own precision makes any wait a guess;
		// round a past date up to a tiny positive wait so it still counts.
		return max(t.Sub(now).Seconds(), 0.001)
	}
	return 0
}

// refusedKey is the message of a 401 whose server said reason: whether
// a key was sent and where it came from (Options.KeySource), so the user
// knows which setting to fix, and the server's own words.
func (c *Client) refusedKey(reason string) string {
	var b strings.Builder
	b.WriteString("authentication failed: ")
	switch src := c.opts.KeySource; {
	case c.opts.APIKey == "" && src != "":
		b.WriteString("no API key was sent (" + src + ")")
	case c.opts.APIKey == "":
		b.WriteString("no API key was sent")
	case src != "":
		b.WriteString("the server refused the API key from " + src)
	default:
		b.WriteString("the server refused the API key")
	}
	b.WriteString(" (server: " + reason + ")")
	return b.String()
}

// minKeyPiece is the shortest run of the key's characters a refusal's
// text is searched for: shorter runs ("sk-", a masked "****abcd") say
// nothing a thief could use.
const minKeyPiece = 8

// redactPieces takes out of s, which redact has already cleared of the
// whole key, each word that quotes a piece of the key of minKeyPiece
// bytes or more: a server that refuses a key may quote its start.
func (c *Client) redactPieces(s string) string {
	k := c.opts.APIKey.Reveal()
	if len(k) < minKeyPiece {
		return s
	}
	words := strings.Fields(s)
	changed := false
	for i, w := range words {
		core := strings.TrimFunc(w, func(r rune) bool { return strings.ContainsRune(".,;:()[]\"'`…", r) })
		if len(core) >= minKeyPiece && strings.Contains(k, core) {
			words[i], changed = strings.Replace(w, core, redacted, 1), true
		}
	}
	if !changed {
		return s
	}
	return strings.Join(words, " ")
}

func (c *Client) redact(s string) string {
	if k := c.opts.APIKey.Reveal(); len(k) >= 4 {
		s = strings.ReplaceAll(s, k, redacted)
	}
	return s
}

// setHeaders sets the headers every request carries: User-Agent, the API
// key and the configured extra headers, last so that they win.
func (c *Client) setHeaders(h http.Header) {
	h.Set("User-Agent", "dshd")
	if k := c.opts.APIKey.Reveal(); k != "" {
		h.Set("Authorization", "Bearer "+k)
	}
	for k, v := range c.opts.ExtraHeaders {
		h.Set(k, v)
	}
}

// Models lists the server's models (GET /models).
func (c *Client) Models(ctx context.Context) ([]llm.Info, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, c.modelURL, nil)
	if err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	hreq.Header.Set("Accept", "application/json")
	c.setHeaders(hreq.Header)
	if c.opts.FirstByteTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.opts.FirstByteTimeout)
		defer cancel()
		hreq = hreq.WithContext(ctx)
	}
	resp, err := c.http.Do(hreq)
	if err != nil {
		return nil, llm.NewAPIError(0, "connection_error",
			"cannot reach the model server: "+c.redact(err.Error()), "", true, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, c.httpError(resp)
	}
	var list struct {
		Data []struct {
			ID            string `json:"id"`
			Name          string `json:"name"`
			ContextLength int    `json:"context_length"` // OpenRouter
			MaxModelLen   int    `json:"max_model_len"`  // vLLM
			Meta          struct {
				NCtxTrain int `json:"n_ctx_train"` // llama.cpp
			} `json:"meta"`
		} `json:"data"`
	}
	// A list is an answer of the server's too, held whole: bounded as a
	// non-streamed answer's body is, and never decoded cut.
	raw, err := io.ReadAll(io.LimitReader(resp.Body, int64(c.carrierBytes())+1))
	if err != nil {
		return nil, fmt.Errorf("openai: read models: %w", err)
	}
	if len(raw) > c.carrierBytes() {
		return nil, fmt.Errorf("openai: the list of models (GET /models) passed %d bytes, twice the answer's bound of %d (%s sets it)",
			c.carrierBytes(), c.opts.MaxAnswerBytes, c.opts.Settings.MaxAnswerBytes)
	}
	if err := json.Unmarshal(bytes.TrimSpace(raw), &list); err != nil {
		var typeErr *json.UnmarshalTypeError
		if !errors.As(err, &typeErr) {
			return nil, fmt.Errorf("openai: decode models: %w", err)
		}
	}
	out := make([]llm.Info, 0, len(list.Data))
	for _, m := range list.Data {
		if m.ID == "" {
			continue
		}
		info := llm.Info{ID: m.ID, Name: m.Name}
		info.ContextWindow = max(m.ContextLength, m.MaxModelLen, m.Meta.NCtxTrain)
		out = append(out, info)
	}
	return out, nil
}
