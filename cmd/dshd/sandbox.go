// This file is the hidden `sandbox` command: dshd re-executed as the
// helper between itself and every command it runs (see tools/sandbox).

package main

import (
	"github.com/spf13/cobra"

	"github.com/dshd/dshd/tools/sandbox"
)

// newSandboxCmd is `dshd sandbox POLICY -- COMMAND...`, which only dshd
// itself runs: it confines itself, starts the command and supervises it.
// Its flags are not parsed: everything after the name is the helper's.
func newSandboxCmd() *cobra.Command {
	return &cobra.Command{
		Use:                "sandbox POLICY -- COMMAND [ARG...]",
		Short:              "Run a command confined (dshd starts this itself)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(_ *cobra.Command, args []string) error {
			if code := sandbox.Main(args); code != 0 {
				return &exitError{code: code}
			}
			return nil
		},
	}
}
