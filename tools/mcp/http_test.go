package mcp

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

const httpToken = "Bearer tok-3f9a8c1d"

// httpServer serves the helper's tools in process over transport ("http"
// or "sse") on loopback, refusing requests without httpToken.
func httpServer(t *testing.T, transport string) *httptest.Server {
	t.Helper()
	srv := newHelperServer(0)
	get := func(*http.Request) *sdk.Server { return srv }
	var h http.Handler
	if transport == TransportSSE {
		h = sdk.NewSSEHandler(get, nil)
	} else {
		h = sdk.NewStreamableHTTPHandler(get, nil)
	}
	return serveHTTP(t, srv, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != httpToken {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
}

func TestHTTPServers(t *testing.T) {
	for _, transport := range []string{TransportHTTP, TransportSSE} {
		t.Run(transport+" server tools work end to end", func(t *testing.T) {
			ts := httpServer(t, transport)
			changed := make(chan []string, 4)
			opts := &Options{OnToolsChanged: func(_ string, names []string) { changed <- names }}
			set, reg := mustConnect(t, opts, ServerConfig{
				Name: "remote", Transport: transport, URL: ts.URL,
				Headers: []Header{{Name: "Authorization", Value: httpToken}},
			})
			if s := set.Servers(); len(s) != 1 || s[0].Transport != transport {
				t.Fatalf("servers %+v", s)
			}
			if res := run(t, reg, "mcp__remote__echo", nil, map[string]any{"message": "over " + transport}); res.Output != "echo: over "+transport {
				t.Errorf("echo: %+v", res)
			}
			if res := run(t, reg, "mcp__remote__fail", nil, nil); !res.IsError {
				t.Errorf("fail: %+v", res)
			}
			run(t, reg, "mcp__remote__grow", nil, nil)
			for names := await(t, changed, "the re-sync after grow"); !slices.Contains(names, "mcp__remote__late"); {
				names = await(t, changed, "a re-sync with late")
			}
			closeAll(t, set, reg)
		})

		t.Run(transport+" server refusing our headers is a warning without them", func(t *testing.T) {
			ts := httpServer(t, transport)
			set, _, warnings := connect(t, nil, ServerConfig{
				Name: "remote", Transport: transport, URL: ts.URL,
				Headers: []Header{{Name: "Authorization", Value: "Bearer wrong-9d8e7f"}},
			})
			if len(warnings) != 1 || !errors.Is(warnings[0], ErrStart) || len(set.Servers()) != 0 {
				t.Fatalf("warnings %v, servers %+v", warnings, set.Servers())
			}
			if msg := warnings[0].Error(); strings.Contains(msg, "wrong-9d8e7f") {
				t.Errorf("warning leaks the header: %s", msg)
			}
		})
	}

	t.Run("an unreachable URL is a warning without its query secrets", func(t *testing.T) {
		ts := httptest.NewServer(http.NotFoundHandler())
		url := ts.URL + "/mcp?api_key=q-7c6b5a4"
		ts.Close()
		_, _, warnings := connect(t, nil, ServerConfig{Name: "down", Transport: TransportHTTP, URL: url})
		if len(warnings) != 1 || !errors.Is(warnings[0], ErrStart) {
			t.Fatalf("warnings %v", warnings)
		}
		if msg := warnings[0].Error(); strings.Contains(msg, "q-7c6b5a4") {
			t.Errorf("warning leaks the query: %s", msg)
		}
	})

	t.Run("a call to a server that went away is an error result", func(t *testing.T) {
		ts := httpServer(t, TransportHTTP)
		_, reg := mustConnect(t, nil, ServerConfig{
			Name: "remote", Transport: TransportHTTP, URL: ts.URL,
			Headers: []Header{{Name: "Authorization", Value: httpToken}},
		})
		ts.CloseClientConnections()
		ts.Close()
		res := run(t, reg, "mcp__remote__echo", nil, map[string]any{"message": "anyone?"})
		if !res.IsError {
			t.Errorf("got %+v", res)
		}
		if strings.Contains(res.Output, "tok-3f9a8c1d") {
			t.Errorf("result leaks the header: %s", res.Output)
		}
	})
}
