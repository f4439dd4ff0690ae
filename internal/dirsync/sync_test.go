package dirsync

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSync_ADirectoryIsSyncedAndAMissingOneIsAnError(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Sync(dir); err != nil {
		t.Fatalf("Sync(%s) = %v", dir, err)
	}
	if err := Sync(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("Sync of a missing directory succeeded")
	}
}
