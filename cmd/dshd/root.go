// This file builds the command tree.

package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// exitError carries a process exit code out of a command.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// run executes the command line and returns the process exit code. Only
// the serve command ever sees stdout as a protocol channel; nothing else
// writes to it unless the command's job is to print (version, prompt,
// conformance).
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd(stdin, stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	fmt.Fprintln(stderr, "dshd:", err)
	return 1
}

func newRootCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	serve := newServeCmd(stdin, stdout, stderr)
	root := &cobra.Command{
		Use:           "dshd",
		Short:         "An ACP agent daemon with in-process and cross-process subagents",
		Long:          "dshd speaks the Agent Client Protocol (v1) on stdio or a socket. Run without a command it is `dshd serve` on stdio.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          serve.Args,
		RunE:          serve.RunE,
	}
	root.SetIn(stdin)
	root.SetOut(stderr) // help and usage never touch the protocol channel
	root.SetErr(stderr)
	root.Flags().AddFlagSet(serve.Flags())
	root.AddCommand(serve, newPromptCmd(stdin, stdout, stderr), newConformanceCmd(stdout, stderr), newVersionCmd(stdout))
	return root
}
