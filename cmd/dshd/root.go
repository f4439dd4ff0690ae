// This file builds the command tree and turns its errors into exit codes.

package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dshd/dshd/cmd/dshd/internal/config"
	"github.com/dshd/dshd/internal/suggest"
)

// exitUsage is the exit code of a mistake in the command line or the
// configuration: the command did not start.
const exitUsage = 2

// exitError carries a process exit code out of a command.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// usageError is a mistake in the command line that is not about a
// setting: an unknown command, a missing argument.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// run executes the command line and returns the process exit code. Only
// the serve command ever sees stdout as a protocol channel; nothing else
// writes to it unless the command's job is to print (version, prompt,
// conformance). A mistake in the command line or the configuration is one
// line on stderr and exit 2.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	hideFromOwnUID()
	root := newRootCmd(stdin, stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return 0
	}
	var (
		ee *exitError
		ce *config.Error
		ue *usageError
	)
	switch {
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ce):
		// The mistake alone: whatever wrapped it adds nothing the user
		// can act on.
		fmt.Fprintln(stderr, "dshd:", ce)
		return exitUsage
	case errors.As(err, &ue):
		fmt.Fprintln(stderr, "dshd:", ue)
		return exitUsage
	}
	fmt.Fprintln(stderr, "dshd:", err)
	return 1
}

func newRootCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	serve := newServeCmd(stdin, stdout, stderr)
	// `dshd serve [flags] auth` too: terminal auth appends "auth" to
	// whatever command line the editor starts dshd with.
	serve.AddCommand(newAuthCmd(stdin, stderr))
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
	root.AddCommand(serve, newAuthCmd(stdin, stderr), newPromptCmd(stdin, stdout, stderr), newSessionsCmd(stdout, stderr), newConformanceCmd(stdout, stderr), newVersionCmd(stdout), newSandboxCmd())
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return config.FlagError(c.CommandPath(), c.Flags(), err)
	})
	// Argument errors are usage errors too; the root's, an unknown command,
	// suggests the closest one.
	root.Args = unknownCommand
	usageArgs(root.Commands())
	return root
}

// unknownCommand is the Args check of a command whose arguments can only
// be its subcommands: an argument is an unknown command, and the error
// lists the commands --help shows and suggests the closest.
func unknownCommand(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	var names []string
	for _, sub := range c.Commands() {
		if !sub.Hidden {
			names = append(names, sub.Name())
		}
	}
	return &usageError{fmt.Sprintf("unknown command %q (commands: %s)%s", args[0], strings.Join(names, ", "), suggest.DidYouMean(args[0], names))}
}

// usageArgs makes the argument errors of cmds and their subcommands usage
// errors.
func usageArgs(cmds []*cobra.Command) {
	for _, sub := range cmds {
		if check := sub.Args; check != nil {
			sub.Args = func(c *cobra.Command, args []string) error {
				if err := check(c, args); err != nil {
					return &usageError{c.Name() + ": " + err.Error()}
				}
				return nil
			}
		}
		usageArgs(sub.Commands())
	}
}
