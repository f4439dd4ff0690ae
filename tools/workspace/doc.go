// Package workspace confines a session's file access to its roots (the
// cwd and the additional directories) and is its access to the local disk.
//
// [Workspace.Resolve] turns a path the model or a client named into the
// path it really reaches, symlinks resolved, or refuses it with
// [ErrOutside]: that is the path a permission question names. Every access
// to the local disk then goes through the root holding the path, opened as
// an [os.Root]: a symlink swapped in between the check and the use cannot
// lead outside the root ([Workspace.Open], [Workspace.ReadDir],
// [LocalFS]). A write is prepared before it is approved and lands at the
// approved path or nowhere ([PendingWrite]). [IsControl] names the paths
// whose edits change what runs (.git, dshd's own settings).
//
// It imports nothing of the project and starts no goroutines.
package workspace
