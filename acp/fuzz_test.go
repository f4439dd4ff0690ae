package acp

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"github.com/sourcegraph/jsonrpc2"
)

// FuzzStreamRead feeds arbitrary bytes to a Stream, both as a plain
// jsonrpc2.ObjectStream and with a connection's hooks. It must never panic,
// every line it writes must be valid JSON, and everything it hands on must
// be what jsonrpc2 (or the dispatcher) can take. Seeds: testdata/fuzz.
func FuzzStreamRead(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{}}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		s := NewStream(bytes.NewReader(data), &out, nil, &StreamOptions{MaxLineSize: 4096})
		for {
			var raw json.RawMessage
			if err := s.ReadObject(&raw); err != nil {
				if err != io.EOF {
					t.Fatalf("ReadObject = %v, want io.EOF", err)
				}
				break
			}
			checkForJSONRPC2(t, s, raw)
		}

		hooked := NewStream(bytes.NewReader(data), &out, nil, &StreamOptions{MaxLineSize: 4096})
		hooked.onNotify = func(method string, params json.RawMessage) {
			if params != nil && !json.Valid(params) {
				t.Fatalf("notification %q with invalid params %q", method, params)
			}
		}
		hooked.onRequest = func(id json.RawMessage, method string, params json.RawMessage) {
			if _, ok := idKey(id); !ok {
				t.Fatalf("request with invalid id %q", id)
			}
			if params != nil && !json.Valid(params) {
				t.Fatalf("request %q with invalid params %q", method, params)
			}
			if err := hooked.writeResponse(id, map[string]string{"m": method}, nil); err != nil {
				t.Fatal(err)
			}
		}
		for {
			var raw json.RawMessage
			if err := hooked.ReadObject(&raw); err != nil {
				break
			}
			checkForJSONRPC2(t, hooked, raw)
		}

		for _, line := range bytes.Split(out.Bytes(), []byte("\n")) {
			if len(line) > 0 && !json.Valid(line) {
				t.Fatalf("wrote an invalid line %q", line)
			}
		}
	})
}

// checkForJSONRPC2 checks that raw decodes as a jsonrpc2 request or response
// and answers requests through WriteObject, as jsonrpc2 would.
func checkForJSONRPC2(t *testing.T, s *Stream, raw json.RawMessage) {
	t.Helper()
	var probe struct {
		Method *string `json:"method"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		t.Fatalf("handed on %q: %v", raw, err)
	}
	if probe.Method == nil {
		var resp jsonrpc2.Response
		if err := json.Unmarshal(raw, &resp); err != nil {
			t.Fatalf("handed on a response jsonrpc2 cannot read: %q: %v", raw, err)
		}
		return
	}
	var req jsonrpc2.Request
	if err := json.Unmarshal(raw, &req); err != nil {
		t.Fatalf("handed on a request jsonrpc2 cannot read: %q: %v", raw, err)
	}
	if !req.Notif {
		result := json.RawMessage(`{}`)
		if err := s.WriteObject(&jsonrpc2.Response{ID: req.ID, Result: &result}); err != nil {
			t.Fatal(err)
		}
	}
}
