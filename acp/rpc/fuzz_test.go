package rpc

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/dshd/dshd/acp"
)

// FuzzStreamRead feeds arbitrary bytes to a Stream with a connection's
// hooks. It must never panic, every line it writes must be valid JSON,
// every request and notification it hands on must carry a valid id and
// params, and every response it hands to jsonrpc2 must be one jsonrpc2 can
// read. Seeds: testdata/fuzz.
func FuzzStreamRead(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{}}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		s := NewStream(bytes.NewReader(data), &out, nil, &StreamOptions{Limits: Limits{MaxLineSize: 4096}})
		s.onNotify = func(method string, params json.RawMessage) {
			if params != nil && !json.Valid(params) {
				t.Fatalf("notification %q with invalid params %q", method, params)
			}
		}
		s.onRequest = func(id json.RawMessage, method string, params json.RawMessage) {
			var rid acp.RequestID
			if err := rid.UnmarshalJSON(id); err != nil {
				t.Fatalf("request with invalid id %q: %v", id, err)
			}
			if params != nil && !json.Valid(params) {
				t.Fatalf("request %q with invalid params %q", method, params)
			}
			if err := s.writeResponse(id, map[string]string{"m": method}, nil); err != nil {
				t.Fatal(err)
			}
		}
		for {
			var raw json.RawMessage
			if err := s.ReadObject(&raw); err != nil {
				if err != io.EOF {
					t.Fatalf("ReadObject = %v, want io.EOF", err)
				}
				break
			}
			var resp jsonrpc2.Response
			if err := json.Unmarshal(raw, &resp); err != nil {
				t.Fatalf("handed on a response jsonrpc2 cannot read: %q: %v", raw, err)
			}
		}
		s.Close() // writes what is queued
		for _, line := range bytes.Split(out.Bytes(), []byte("\n")) {
			if len(line) > 0 && !json.Valid(line) {
				t.Fatalf("wrote an invalid line %q", line)
			}
		}
	})
}
