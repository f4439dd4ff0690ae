//go:build !linux

package session

import "os"

// datasync flushes a journal to disk.
func datasync(f *os.File) error { return f.Sync() }
