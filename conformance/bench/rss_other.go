//go:build !unix

package main

import "os"

// maxRSSKB is 0: there is no rusage here to read a peak from.
func maxRSSKB(*os.ProcessState) int64 { return 0 }
