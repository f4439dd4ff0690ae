package main

import (
	"os"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
	"github.com/dshd/dshd/tools/sandbox"
)

// BenchmarkSandbox_True is the cost of the sandbox per command: /bin/true
// run directly, then under dshd's own sandbox helper (this test binary
// re-executed as `dshd sandbox`, with every package dshd links) in each
// mode (and without namespaces, the fallback where user namespaces are
// off). The goal is under 5 ms added to "direct". It is the sandbox's one
// benchmark: the helper it runs is the one dshd runs.
func BenchmarkSandbox_True(b *testing.B) {
	exe := testkit.Executable(b)
	cases := []struct {
		name string
		cfg  *sandbox.Config // nil: no helper
	}{
		{"direct", nil},
		{"off", &sandbox.Config{Mode: sandbox.Off}},
		{"workspace-write", &sandbox.Config{}},
		{"workspace-write-no-network", &sandbox.Config{NoNetwork: true}},
		{"workspace-write-no-namespaces", &sandbox.Config{NoNamespaces: true}},
		{"read-only", &sandbox.Config{Mode: sandbox.ReadOnly}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			var s *sandbox.Sandbox
			if tc.cfg != nil {
				tc.cfg.Helper = []string{exe, "sandbox"}
				tc.cfg.Caches = []string{b.TempDir()}
				var err error
				if s, err = sandbox.New(tc.cfg); err != nil {
					b.Fatal(err)
				}
			}
			ws := b.TempDir()
			if _, err := s.Describe([]string{ws}); err != nil {
				b.Skip(err) // no Landlock here
			}
			env := os.Environ()
			b.ResetTimer()
			for b.Loop() {
				c, err := s.Command(b.Context(), sandbox.Spec{Argv: []string{"/bin/true"}, Dir: ws, Env: env, Roots: []string{ws}})
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
