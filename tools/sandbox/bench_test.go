package sandbox

import (
	"os"
	"testing"
)

// BenchmarkCommand_True measures what the sandbox adds to running
// /bin/true: "direct" is the baseline (no helper), the others go through
// the helper (here the test binary; dshd's own figure is measured by
// cmd/dshd's BenchmarkSandbox_True).
func BenchmarkCommand_True(b *testing.B) {
	cases := []struct {
		name string
		s    func(b *testing.B) *Sandbox
	}{
		{"direct", func(*testing.B) *Sandbox { return nil }},
		{"off", func(b *testing.B) *Sandbox { return newSandbox(b, Config{Mode: Off}) }},
		{"workspace-write", func(b *testing.B) *Sandbox { return newSandbox(b, Config{}) }},
		{"workspace-write-no-namespaces", func(b *testing.B) *Sandbox { return newSandbox(b, Config{NoNamespaces: true}) }},
		{"no-network", func(b *testing.B) *Sandbox { return newSandbox(b, Config{NoNetwork: true}) }},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			s := tc.s(b)
			ws := b.TempDir()
			env := os.Environ()
			// The probe runs once, not in the loop.
			_, _ = s.Describe([]string{ws})
			b.ResetTimer()
			for b.Loop() {
				c, err := s.Command(b.Context(), Spec{Argv: []string{"/bin/true"}, Dir: ws, Env: env, Roots: []string{ws}})
				if err != nil {
					b.Fatal(err)
				}
				if err := c.Start(); err != nil {
					b.Fatal(err)
				}
				if st, err := c.Wait(); err != nil || st.Code != 0 {
					b.Fatal(st, err)
				}
			}
		})
	}
}
