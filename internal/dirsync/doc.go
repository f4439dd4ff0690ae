// Package dirsync makes a directory's entries durable: after a file is
// created or renamed into a directory, syncing the directory is what makes
// the new name survive a crash. The journal store and the key store both
// need it; Windows cannot open a directory for syncing (the call fails
// with "Access is denied"), so there it does nothing.
package dirsync
