// dial.go: reaching an ACP agent behind the remote transport — ws:// and
// wss:// as a WebSocket, http:// and https:// as Streamable HTTP.

package remote

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"

	"github.com/coder/websocket"
)

// DialOptions configure [Dial]. The zero value works.
type DialOptions struct {
	// Token, when set, is sent as "Authorization: Bearer TOKEN".
	Token string
	// Header is added to every request.
	Header http.Header
	// Client makes the requests: its transport carries the TLS settings
	// and its Jar the cookies a load balancer keeps affinity with. Nil is
	// a client of its own with a fresh cookie jar; callers that reconnect
	// pass the same client to keep the affinity.
	Client *http.Client
	// MaxMessageBytes caps one message received over Streamable HTTP
	// (default 64 MiB); over WebSocket the reader's line limit applies.
	MaxMessageBytes int
	// Logger receives the transport's logs; nil discards.
	Logger *slog.Logger
}

// StatusError is an HTTP answer that refused the connection: a wrong
// token (401, 403), an unknown connection (404), a draining daemon (503).
type StatusError struct {
	URL    string
	Status int
	Body   string // the start of the body, for the message
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("%s answered %d %s", e.URL, e.Status, http.StatusText(e.Status))
	if b := strings.TrimSpace(e.Body); b != "" {
		msg += ": " + b
	}
	return msg
}

// NewClient returns an HTTP client for dialling with a cookie jar of its
// own, so one client kept per endpoint keeps its affinity cookie across
// reconnects.
func NewClient() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Transport: http.DefaultTransport.(*http.Transport).Clone()}
}

// Dial connects to the ACP endpoint at rawURL and returns the connection
// in acp/rpc's framing (one newline-terminated JSON-RPC message per line).
// Over Streamable HTTP the first message written must be initialize.
func Dial(ctx context.Context, rawURL string, o *DialOptions) (io.ReadWriteCloser, error) {
	var opts DialOptions
	if o != nil {
		opts = *o
	}
	ownClient := opts.Client == nil
	if ownClient {
		opts.Client = NewClient()
	}
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("remote: %q is not a URL: %w", rawURL, err)
	}
	hdr := opts.Header.Clone()
	if hdr == nil {
		hdr = http.Header{}
	}
	if opts.Token != "" {
		hdr.Set("Authorization", "Bearer "+opts.Token)
	}
	switch u.Scheme {
	case "ws", "wss":
		ws, resp, err := websocket.Dial(ctx, rawURL, &websocket.DialOptions{
			HTTPClient:      opts.Client,
			HTTPHeader:      hdr,
			CompressionMode: websocket.CompressionDisabled,
		})
		if err != nil {
			if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
				return nil, statusError(rawURL, resp)
			}
			return nil, fmt.Errorf("remote: %s: %w", rawURL, err)
		}
		if ownClient {
			opts.Client.CloseIdleConnections()
		}
		return newWSConn(ws, addr(u.Host)), nil
	case "http", "https":
		s := newHTTPStream(rawURL, hdr, &opts)
		s.ownClient = ownClient
		return s, nil
	}
	return nil, fmt.Errorf("remote: %q: want a ws://, wss://, http:// or https:// URL", rawURL)
}

// statusError reads the start of a refusing answer's body.
func statusError(u string, resp *http.Response) *StatusError {
	e := &StatusError{URL: u, Status: resp.StatusCode}
	if resp.Body != nil {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		e.Body = string(b)
	}
	return e
}
