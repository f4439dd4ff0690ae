//go:build linux || darwin || windows

package session

import (
	"errors"
	"os"
	"testing"
)

func TestTheFreeSpaceOfARealDirectoryIsKnown(t *testing.T) {
	n, err := freeSpace(t.TempDir())
	if err != nil || n <= 0 {
		t.Fatalf("freeSpace = %d, %v", n, err)
	}
	if _, err := freeSpace("/nonexistent/" + t.Name()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("freeSpace of a missing directory: %v", err)
	}
}
