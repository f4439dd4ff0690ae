package mcp

import (
	"errors"
	"testing"
	"time"

	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/sandbox"
)

// BenchmarkStdioServerStart measures starting a stdio server up to its
// first tools/list (what a session waits for), directly and under the
// workspace-write sandbox; closing it is not timed.
func BenchmarkStdioServerStart(b *testing.B) {
	sb, err := sandbox.New(&sandbox.Config{Caches: []string{b.TempDir()}, Grace: 200 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		sb   *sandbox.Sandbox
	}{{"direct", nil}, {"sandbox", sb}} {
		b.Run(bc.name, func(b *testing.B) {
			if _, err := bc.sb.Describe(nil); errors.Is(err, sandbox.ErrRefused) {
				b.Skipf("this kernel cannot confine (no Landlock): %v", err)
			}
			ws := b.TempDir()
			cfg := helperServer(b, "helper", "tools")
			opts := &Options{Cwd: ws, Roots: []string{ws}, Sandbox: bc.sb}
			for b.Loop() {
				reg := tools.NewRegistry(nil)
				set, warnings := Connect(b.Context(), []ServerConfig{cfg}, reg, opts)
				// The helper's long and odd tool names are renamed on purpose.
				if w := withoutRenames(warnings); len(w) > 0 {
					b.Fatal(w)
				}
				b.StopTimer()
				_ = set.Close()
				b.StartTimer()
			}
		})
	}
}
