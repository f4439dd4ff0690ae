//go:build unix

package dirsync

import "os"

// Sync makes the entries of dir (a new or renamed file) durable.
func Sync(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
