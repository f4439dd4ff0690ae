// This file implements `dshd conformance -- CMD ARGS...`: the ACP
// conformance suite against any agent command.

package main

import (
	"errors"
	"io"

	"github.com/spf13/cobra"
)

func newConformanceCmd(stdout, stderr io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "conformance -- CMD [ARGS...]",
		Short: "Run the ACP conformance suite against an agent command and print a table",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("conformance: not built yet")
		},
	}
}
