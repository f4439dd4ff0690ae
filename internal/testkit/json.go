package testkit

import (
	"bytes"
	"encoding/json"
	"testing"
)

// EncodeJSON returns v as encoding/json's Encoder writes it with HTML
// escaping off (as the ACP stream does), without the trailing newline:
// the reference a hand-written encoder is compared with.
func EncodeJSON(t testing.TB, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
