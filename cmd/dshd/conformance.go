// This file implements `dshd conformance -- CMD ARGS...`: the ACP
// conformance suite against any agent command.

package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/dshd/dshd/conformance"
)

func newConformanceCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		filter, schemaDir string
		timeout           time.Duration
		parallel          int
		dshdCases, all    bool
		verbose, list     bool
	)
	cmd := &cobra.Command{
		Use:   "conformance [flags] -- CMD [ARGS...]",
		Short: "Run the ACP conformance suite against an agent command and print a table",
		Long: `Run the ACP conformance suite against any agent that speaks ACP v1 on stdio.
Every case starts CMD ARGS afresh, drives it as a fake client, and checks the
items of the conformance checklists (acp-v1.md, acp-subagents.md §15). The
table has one row per checklist item; the exit status is 1 when a case fails.
Checks of dshd's own documented policy (items marked policy) and uses of
draft features report "advice", which never sets the exit status. A finding
in the initialize or session setup results is reported once, not in every
case.

Cases that need a capability the agent does not advertise are skipped. Cases
that drive dshd's scripted model (tools, subagents) run only when the agent
says it is dshd. With --schema (default: the npm package in
conformance/interop/node_modules when found) every message is also validated
against the official JSON schema.`,
		// --list needs no agent: the cases are the suite's.
		Args: func(cmd *cobra.Command, args []string) error {
			if list {
				return nil
			}
			return cobra.MinimumNArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var cases *regexp.Regexp
			if filter != "" {
				re, err := regexp.Compile(filter)
				if err != nil {
					return &usageError{fmt.Sprintf("conformance: --case %q: %v", filter, err)}
				}
				cases = re
			}
			if list {
				for _, c := range conformance.Cases() {
					if cases == nil || cases.MatchString(c.ID) || cases.MatchString(c.Name) {
						fmt.Fprintf(stdout, "%s\t%v\t%s\n", c.ID, c.Items, c.Name)
					}
				}
				return nil
			}
			opts := &conformance.Options{Timeout: timeout, Parallel: parallel, Dshd: dshdCases, Cases: cases}
			if schemaDir == "" {
				if wd, err := os.Getwd(); err == nil {
					schemaDir, _ = conformance.FindSchemaDir(wd)
				}
			}
			if schemaDir != "" {
				s, err := conformance.LoadSchemas(schemaDir)
				if err != nil {
					return fmt.Errorf("--schema: %w", err)
				}
				opts.Schema = s
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			target := conformance.Target{Command: args[0], Args: args[1:]}
			results := conformance.Run(ctx, target, opts)
			if err := conformance.WriteTable(stdout, results); err != nil {
				return err
			}
			failed := conformance.Failed(results)
			if failed || verbose || all || conformance.CountCases(results)[conformance.Advice] > 0 {
				fmt.Fprintln(stdout)
				if err := conformance.WriteDetails(stdout, results, verbose || all); err != nil {
					return err
				}
			}
			if failed {
				return &exitError{code: 1}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&filter, "case", "", "run only the cases whose id or name matches this regexp")
	f.DurationVar(&timeout, "timeout", 30*time.Second, "watchdog for one case")
	f.IntVar(&parallel, "parallel", 0, "cases run at once (default 2×GOMAXPROCS)")
	f.BoolVar(&dshdCases, "dshd-cases", true, "run the dshd-only cases when the agent says it is dshd")
	f.StringVar(&schemaDir, "schema", "", "directory holding schema.json and schema.unstable.json of @agentclientprotocol/sdk (schema/v1)")
	f.BoolVarP(&verbose, "verbose", "v", false, "also print why cases were skipped")
	f.BoolVar(&all, "details", false, "print the details of every failed and skipped case")
	f.BoolVar(&list, "list", false, "list the cases (those --case matches) and exit; no command needed")
	return cmd
}
