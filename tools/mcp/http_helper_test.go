package mcp

import (
	"net/http"
	"net/http/httptest"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveHTTP serves h, a handler of srv's, on loopback until the test ends.
func serveHTTP(t *testing.T, srv *sdk.Server, h http.Handler) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
		// A session whose client never said goodbye (the server "went
		// away" under it) lives on in the handler until closed.
		for ss := range srv.Sessions() {
			_ = ss.Close()
		}
	})
	return ts
}
