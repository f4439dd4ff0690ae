package session

import "syscall"

// freeSpace returns the bytes available to an unprivileged process on
// dir's file system: the blocks statfs reports available (not the ones
// kept for root), in the file system's block size.
func freeSpace(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}
