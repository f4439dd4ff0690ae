package mcp

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

func BenchmarkStdoutFilter(b *testing.B) {
	line := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"log 12345"}}` + "\n"
	data := strings.Repeat(line, 10000)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		f := newStdoutFilter(io.NopCloser(bytes.NewReader([]byte(data))), &msgLimit{max: DefaultMaxMessageBytes, log: discard}, &redactor{})
		if _, err := io.Copy(io.Discard, f); err != nil {
			b.Fatal(err)
		}
	}
}
