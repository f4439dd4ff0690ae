package sameprogram_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dshd/dshd/internal/sameprogram"
	"github.com/dshd/dshd/internal/testkit"
)

func TestIs(t *testing.T) {
	self := testkit.Executable(t)
	dir := t.TempDir()
	link := filepath.Join(dir, "linked")
	if err := os.Symlink(self, link); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other")
	if err := os.WriteFile(other, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	for _, tc := range []struct {
		name, command string
		want          bool
	}{
		{"its own path", self, true},
		{"a link to it", link, true},
		{"a name found on PATH", "linked", true},
		{"another program", other, false},
		{"another name on PATH", "other", false},
		{"a name not found", "no-such-program", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sameprogram.Is(tc.command, self); got != tc.want {
				t.Errorf("Is(%q) = %v, want %v", tc.command, got, tc.want)
			}
		})
	}
}
