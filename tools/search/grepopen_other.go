//go:build !unix

// This file opens files for grep through the os package where raw unix
// system calls are not available.

package search

import (
	"io"
	"os"
)

func openRead(path string) (io.ReadCloser, error) { return os.Open(path) }
