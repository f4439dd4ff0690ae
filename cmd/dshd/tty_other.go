//go:build !linux

// This file stands in for the terminal check where dshd does not ask the
// kernel: no file counts as a terminal, so nothing is drawn in place.

package main

import "os"

// isTTY reports false: off Linux dshd draws no live line.
func isTTY(*os.File) bool { return false }
