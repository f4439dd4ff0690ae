// This file implements `dshd sessions list|show|delete`: the stored
// sessions of the state dir, read and removed directly through the
// session store, with no daemon, model or key involved.

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/dshd/dshd/acp"
	"github.com/dshd/dshd/agent/session"
	"github.com/dshd/dshd/cmd/dshd/internal/config"
	"github.com/dshd/dshd/cmd/dshd/internal/daemon"
)

func newSessionsCmd(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List, show and delete the stored sessions",
		Long: `Work on the sessions stored in the state dir (--state-dir, default
$XDG_STATE_HOME/dshd): the ones every client, dshd prompt included, can load
or resume. Subagent children are kept in their parent's journal and are not
listed.`,
		// Runnable, so that an unknown subcommand is an error (exit 2)
		// rather than the help, and no subcommand is the help.
		Args: unknownCommand,
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	cmd.AddCommand(newSessionsListCmd(stdout, stderr), newSessionsShowCmd(stdout, stderr), newSessionsDeleteCmd(stderr))
	return cmd
}

// openStore opens the store the settings of cmd name.
func openStore(cmd *cobra.Command, stderr io.Writer) (*session.Store, error) {
	st, err := config.Load(cmd.Flags(), os.LookupEnv)
	if err != nil {
		return nil, err
	}
	log, err := newLogger(stderr, st.LogLevel, st.LogFormat)
	if err != nil {
		return nil, err
	}
	dir, err := daemon.SessionsDir(st.StateDir)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, &noStore{dir: dir}
	}
	store, err := session.NewStore(dir, &session.StoreOptions{Logger: log})
	if err != nil {
		return nil, daemon.StateDirError(st, err)
	}
	return store, nil
}

// noStore is the error of a state dir that holds no sessions directory:
// the sessions commands only read it, so they do not create it, and a
// mistyped --state-dir is said rather than made.
type noStore struct{ dir string }

func (e *noStore) Error() string {
	return fmt.Sprintf("no sessions in %s: it does not exist (no session was stored there)", e.dir)
}

// noSession is the error for an id the store does not have.
func noSession(store *session.Store, id string) error {
	return fmt.Errorf("no session %s in %s (dshd sessions list shows them)", id, store.Dir())
}

func newSessionsListCmd(stdout, stderr io.Writer) *cobra.Command {
	var jsonOut bool
	var cwd string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the sessions, most recently used first",
		Long: `List the stored sessions, most recently used first: id, last use, working
directory and title. With --json, stdout is one JSON array of objects with
sessionId, cwd, additionalDirectories, title, createdAt and updatedAt.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, err := openStore(cmd, stderr)
			var none *noStore
			if errors.As(err, &none) {
				fmt.Fprintf(stderr, "dshd: %v\n", none)
				return listSessions(stdout, nil, jsonOut)
			}
			if err != nil {
				return err
			}
			if cwd != "" {
				if cwd, err = filepath.Abs(cwd); err != nil {
					return err
				}
			}
			infos := []session.Info{}
			for cursor := ""; ; {
				page, next, err := store.List(cwd, cursor, session.MaxPageSize)
				if err != nil {
					return err
				}
				infos = append(infos, page...)
				if next == "" {
					break
				}
				cursor = next
			}
			return listSessions(stdout, infos, jsonOut)
		},
	}
	config.AddFlags(cmd.Flags(), config.Sessions)
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print a JSON array")
	cmd.Flags().StringVar(&cwd, "cwd", "", "only the sessions of this working directory")
	return cmd
}

// listSessions prints infos as a table, or as a JSON array with asJSON.
func listSessions(stdout io.Writer, infos []session.Info, asJSON bool) error {
	if asJSON {
		if infos == nil {
			infos = []session.Info{} // [], not null
		}
		b, err := json.MarshalIndent(infos, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tLAST USED\tCWD\tTITLE")
	for _, in := range infos {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", in.SessionID, when(in.UpdatedAt), in.Cwd, in.Title)
	}
	return tw.Flush()
}

// when formats a time for a person: local, to the minute.
func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04")
}

func newSessionsShowCmd(stdout, stderr io.Writer) *cobra.Command {
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Print a session's transcript",
		Long: `Print a session's transcript as dshd prompt shows a turn: the user's prompts
("> …"), the answers, and each tool call with how it ended (a failure with
its reason). With --json, stdout is the session's recorded session/update
notifications as JSON lines, the very events dshd prompt --json prints.
A session a daemon has open is read, never changed.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := openStore(cmd, stderr)
			if err != nil {
				return err
			}
			id := args[0]
			info, err := store.Info(id)
			if errors.Is(err, session.ErrNotFound) {
				return noSession(store, id)
			}
			if err != nil {
				return err
			}
			recs, err := session.ReadJournal(store.Dir(), id, &session.JournalOptions{})
			if errors.Is(err, session.ErrNotFound) {
				return noSession(store, id)
			}
			if err != nil {
				return err
			}
			if !jsonOut {
				fmt.Fprintf(stdout, "session %s", info.SessionID)
				if info.Title != "" {
					fmt.Fprintf(stdout, ": %s", info.Title)
				}
				fmt.Fprintf(stdout, "\ncwd %s · created %s · last used %s\n\n", info.Cwd, when(info.CreatedAt), when(info.UpdatedAt))
			}
			r := renderer{out: stdout, tools: stdout, prompts: true}
			for _, rec := range recs {
				if rec.Kind != session.KindUpdate {
					continue
				}
				var n acp.SessionNotification
				if err := json.Unmarshal(rec.Data, &n); err != nil || string(n.SessionID) != id {
					continue // a subagent child's traffic, or a record this dshd cannot read
				}
				if jsonOut {
					fmt.Fprintf(stdout, "%s\n", rec.Data)
					continue
				}
				r.update(&n)
			}
			r.endLine()
			return nil
		},
	}
	config.AddFlags(cmd.Flags(), config.Sessions)
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print the recorded session/update notifications as JSON lines")
	return cmd
}

// exitHeld is the exit code of a delete that left out a session a
// running dshd has open.
const exitHeld = 3

func newSessionsDeleteCmd(stderr io.Writer) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "delete ID...",
		Short: "Delete sessions for good",
		Long: `Delete each named session: its journal and its index entry (or an index
entry left without a journal, which sessions list warns of). A path of a
session's files that is not a file (a directory) is refused and nothing of
that session is deleted, said on stderr; the others named are deleted and
the exit code is 1. A session a running dshd has open is left alone, said on
stderr, and the exit code is 3 (the others named are deleted): close it
there first. With --force it is deleted all the same, and that dshd answers
its next prompt of the session with an error, since nothing more of it can
be saved.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := openStore(cmd, stderr)
			if err != nil {
				return err
			}
			held, refused := false, false
			for _, id := range args {
				leftover := store.Leftover(id)
				if !store.Exists(id) && leftover == "" {
					return noSession(store, id)
				}
				var err error
				wasHeld := false
				if force {
					wasHeld, err = store.ForceDelete(id)
				} else {
					err = store.Delete(id)
				}
				switch {
				case errors.Is(err, session.ErrHeld):
					fmt.Fprintf(stderr, "dshd: %s is open in a running dshd, not deleted: close it there first (or --force)\n", id)
					held = true
				case errors.Is(err, session.ErrNotSessionFile):
					fmt.Fprintf(stderr, "dshd: %v\n", err)
					refused = true
				case err != nil:
					return err
				case wasHeld:
					fmt.Fprintf(stderr, "dshd: deleted %s, which a running dshd has open: it saves nothing more of it\n", id)
				case leftover != "":
					// What `sessions list` warned of, said as what it was.
					fmt.Fprintf(stderr, "dshd: deleted %s: its index entry %s, which had no journal\n", id, leftover)
				default:
					fmt.Fprintf(stderr, "dshd: deleted %s\n", id)
				}
			}
			switch {
			case refused:
				return &exitError{code: exitFailed}
			case held:
				return &exitError{code: exitHeld}
			}
			return nil
		},
	}
	config.AddFlags(cmd.Flags(), config.Sessions)
	cmd.Flags().BoolVar(&force, "force", false, "delete sessions a running dshd has open too")
	return cmd
}
