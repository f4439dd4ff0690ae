// This file holds the file a write_file or edit_file call changes, from
// the moment it is read for the diff to the write.

package builtin

import (
	"context"

	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/workspace"
)

// target is the file one call reads and then writes. On the local disk
// its directory is held open from the read to the write, so the write
// approved for the path lands there or nowhere (workspace.PendingWrite);
// through the editor it is the path, which the editor confines.
type target interface {
	ReadTextFile(ctx context.Context) (string, error)
	Commit(ctx context.Context, content string) error
	Close() error
}

// targetOf opens the file a write_file or edit_file call's path argument
// names, for the read and then the write. res is the model's answer when
// the argument is missing or refused, or the file cannot be opened. The
// caller closes file.
func targetOf(call *tools.Call, arg string) (env *tools.Env, path string, file target, res *tools.Result) {
	env, path, res = fileOf(call, arg)
	if res != nil {
		return nil, "", nil, res
	}
	file, err := openTarget(fsOf(env), path)
	if err != nil {
		return nil, "", nil, readError(env, path, err)
	}
	return env, path, file, nil
}

// openTarget returns the target at the resolved path in fsys.
func openTarget(fsys tools.FileSystem, path string) (target, error) {
	if l, ok := fsys.(*workspace.LocalFS); ok {
		return l.PrepareWrite(path)
	}
	return pathTarget{fsys, path}, nil
}

// pathTarget is a target reached by path.
type pathTarget struct {
	fsys tools.FileSystem
	path string
}

func (p pathTarget) ReadTextFile(ctx context.Context) (string, error) {
	return p.fsys.ReadTextFile(ctx, p.path, 0, 0)
}

func (p pathTarget) Commit(ctx context.Context, content string) error {
	return p.fsys.WriteTextFile(ctx, p.path, content)
}

func (p pathTarget) Close() error { return nil }
