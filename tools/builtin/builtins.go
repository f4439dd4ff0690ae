// This file assembles the built-in tools.

package builtin

import (
	"github.com/dshd/dshd/tools"
)

// BuiltinOptions configures the built-in tools; nil or zero fields mean
// each tool's defaults.
type BuiltinOptions struct {
	ReadFile   *ReadFileOptions
	ListDir    *ListDirOptions
	Glob       *GlobOptions
	Grep       *GrepOptions
	RunCommand *RunCommandOptions
}

// Builtins returns every built-in tool: read_file, write_file, edit_file,
// list_dir, glob, grep, run_command and plan. opts may be nil.
func Builtins(opts *BuiltinOptions) []tools.Tool {
	if opts == nil {
		opts = &BuiltinOptions{}
	}
	return []tools.Tool{
		NewReadFile(opts.ReadFile),
		NewWriteFile(),
		NewEditFile(),
		NewListDir(opts.ListDir),
		NewGlob(opts.Glob),
		NewGrep(opts.Grep),
		NewRunCommand(opts.RunCommand),
		NewPlan(),
	}
}
