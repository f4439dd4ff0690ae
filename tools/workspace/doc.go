// Package workspace confines a session's file access to its roots (the
// cwd and the additional directories) and is its access to the local disk.
//
// [Workspace.Resolve] turns a path the model or a client named into the
// path it really reaches, symlinks resolved, or refuses it with
// [ErrOutside]. [LocalFS] reads and writes files of the local disk inside
// those roots.
//
// It imports nothing of the project and starts no goroutines.
package workspace
