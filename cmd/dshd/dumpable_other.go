//go:build !linux

package main

// hideFromOwnUID does nothing where there is no prctl: see the Linux one.
func hideFromOwnUID() {}
