//go:build !unix

package workspace

import "os"

// openFlags open files for reading.
const openFlags = os.O_RDONLY
