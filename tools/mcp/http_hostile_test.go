package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// bigServer serves a tool "big", whose text is {"n": N} bytes, over
// transport: "http" answering in application/json bodies, "http-sse"
// answering in event streams, or "sse".
func bigServer(t *testing.T, transport string) *httptest.Server {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "big", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "big", Description: "A big answer.", InputSchema: objectSchema},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var in struct{ N int }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Repeat("b", in.N)}}}, nil
		})
	get := func(*http.Request) *sdk.Server { return srv }
	var h http.Handler
	switch transport {
	case TransportSSE:
		h = sdk.NewSSEHandler(get, nil)
	case "http-sse":
		h = sdk.NewStreamableHTTPHandler(get, nil)
	default:
		h = sdk.NewStreamableHTTPHandler(get, &sdk.StreamableHTTPOptions{JSONResponse: true})
	}
	return serveHTTP(t, srv, h)
}

func TestHTTPAnswerOverTheMessageLimitFailsOnlyItsCall(t *testing.T) {
	for _, transport := range []string{TransportHTTP, "http-sse", TransportSSE} {
		t.Run(transport, func(t *testing.T) {
			var buf testkit.SyncBuffer
			const limit = 1 << 20
			ts := bigServer(t, transport)
			_, reg := mustConnect(t, &Options{Logger: logTo(&buf), MaxMessageBytes: limit, Settings: flags}, ServerConfig{Name: "h", Transport: strings.TrimSuffix(transport, "-sse"), URL: ts.URL})
			for range 2 {
				res := run(t, reg, "mcp__h__big", nil, map[string]any{"n": 3 * limit})
				if !res.IsError || !strings.Contains(res.Output, "over 1048576 bytes") || !strings.Contains(res.Output, "--mcp-max-message-bytes") {
					t.Fatalf("an oversized answer: %.300s", res.Output)
				}
			}
			if res := run(t, reg, "mcp__h__big", nil, map[string]any{"n": 3}); res.IsError || res.Output != "bbb" {
				t.Errorf("the server is not usable after an oversized answer: %.300s", res.Output)
			}
			checkOneWarning(t, &buf, "over the limit")
		})
	}
}

// An endless error body must not hold up the session's start: the
// warning names the status and connect returns.
func TestHTTPErrorWithAnEndlessBodyIsAWarning(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		chunk := []byte(strings.Repeat("e", 64<<10))
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
	_, _, warnings := connect(t, &Options{MaxMessageBytes: 1 << 20}, ServerConfig{Name: "h", Transport: TransportHTTP, URL: ts.URL})
	if len(warnings) != 1 || !strings.Contains(warnings[0].Error(), "Internal Server Error") {
		t.Fatalf("warnings %v", warnings)
	}
}

func TestHTTPRedirectToAnotherHostIsNotFollowedWithOurHeaders(t *testing.T) {
	var leaked atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a := r.Header.Get("Authorization"); a != "" {
			leaked.Store(a)
		}
		http.Error(w, "nothing here", http.StatusNotFound)
	}))
	t.Cleanup(other.Close)
	// The same loopback server under another name is another host.
	otherURL := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, otherURL+"/mcp", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(ts.Close)
	_, _, warnings := connect(t, nil, ServerConfig{
		Name: "h", Transport: TransportHTTP, URL: ts.URL,
		Headers: []Header{{Name: "Authorization", Value: httpToken}},
	})
	if v := leaked.Load(); v != nil {
		t.Errorf("the other host got our Authorization header %q", v)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0].Error(), "redirect") || !strings.Contains(warnings[0].Error(), "localhost") {
		t.Errorf("want a warning that names the redirect, got %v", warnings)
	}
}
