//go:build !unix

package keystore

// syncDir does nothing: a directory cannot be opened for syncing here, and
// the rename is durable once the file system flushes its metadata.
func syncDir(string) error { return nil }
