package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLookPath(t *testing.T) {
	first, second := t.TempDir(), t.TempDir()
	for _, dir := range []string{first, second} {
		if err := os.WriteFile(filepath.Join(dir, "srv"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(first, "plain"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := "PATH=" + first + string(os.PathListSeparator) + second
	tests := []struct {
		name, command string
		env           []string
		want, err     string
	}{
		{"the first PATH entry holding the name wins", "srv", []string{path}, filepath.Join(first, "srv"), ""},
		{"the last PATH of the environment counts", "srv", []string{"PATH=/nonexistent", "PATH=" + second}, filepath.Join(second, "srv"), ""},
		{"a file nobody may execute is skipped", "plain", []string{path}, "", "cannot find plain in the server's PATH"},
		{"relative PATH entries are skipped", "srv", []string{"PATH=." + string(os.PathListSeparator) + "rel"}, "", "cannot find srv"},
		{"no PATH at all says so", "srv", nil, "", "has no PATH"},
		{"a path is kept as it is", "./bin/srv", []string{path}, "./bin/srv", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := lookPath(tt.command, tt.env)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("lookPath(%q) = %q, %v; want an error with %q", tt.command, got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("lookPath(%q) = %q, %v; want %q", tt.command, got, err, tt.want)
			}
		})
	}
}
