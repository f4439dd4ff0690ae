// This file is the HTTP client of http and sse servers: the configured
// headers go to the configured host only, a redirect elsewhere is not
// followed, and answers are read through the message limit (limit.go).

package mcp

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
)

// httpClient returns a client of its own (so Close can drop its idle
// connections) that sends the configured headers to the configured
// origin, and to nowhere else.
func (s *server) httpClient() *http.Client {
	if dt, ok := http.DefaultTransport.(*http.Transport); ok {
		s.httpTr = dt.Clone()
	} else {
		s.httpTr = &http.Transport{Proxy: http.ProxyFromEnvironment, ForceAttemptHTTP2: true}
	}
	origin := ""
	if u, err := url.Parse(s.cfg.URL); err == nil {
		origin = u.Scheme + "://" + u.Host
	}
	t := &peerTransport{base: s.httpTr, origin: origin, headers: s.cfg.Headers, limit: s.msgLimit()}
	return &http.Client{
		Transport: t,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if originOf(req.URL) != origin {
				return fmt.Errorf("the server redirected to %s, another host, which dshd does not follow (give that URL in the configuration if it is meant)", safeURL(req.URL.String()))
			}
			if len(via) >= 10 {
				return errors.New("stopped after 10 redirects")
			}
			return nil
		},
	}
}

func originOf(u *url.URL) string { return u.Scheme + "://" + u.Host }

// peerTransport adds the configured headers to requests to the configured
// origin and bounds the bodies of answers.
type peerTransport struct {
	base    http.RoundTripper
	origin  string
	headers []Header
	limit   *msgLimit
}

func (t *peerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 && originOf(req.URL) == t.origin {
		req = req.Clone(req.Context())
		for _, h := range t.headers {
			req.Header.Set(h.Name, h.Value)
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	// An event stream is long-lived by design: each of its lines is
	// bounded. Anything else is one message.
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/event-stream" {
		resp.Body = newSSEFilter(resp.Body, t.limit)
	} else {
		resp.Body = &boundedBody{body: resp.Body, limit: t.limit}
	}
	resp.ContentLength = -1
	return resp, nil
}
