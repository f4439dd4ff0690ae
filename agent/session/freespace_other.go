//go:build !linux && !darwin && !windows

package session

// freeSpace is unknown here: the free-space bound (DiskLimits.MinFreeBytes)
// is not checked on this platform, and a full disk is met by the journal's
// full-disk handling alone.
var freeSpace func(dir string) (int64, error)
