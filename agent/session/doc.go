// Package session holds a session: its agent, its modes and config
// options, and its journal.
//
// The journal is what makes a session survive the daemon. Each session has
// one append-only JSONL file, <id>.jsonl, in a state directory
// ($XDG_STATE_HOME/dshd/sessions by default, see [DefaultDir]). Every line
// is one [Record]: a kind ("meta" first, then "update", "message" and
// "state" records), a time, and data the journal never interprets. A
// record is written with a single write of a whole line, so a crash can
// tear at most the last line; [OpenJournal] returns every complete record,
// logs and skips a torn or corrupt line, and the next append starts on a
// fresh line. [Journal.Sync] makes everything appended so far durable; the
// session calls it at the end of every turn and at every tool completion.
//
// Beside each journal a small sidecar, <id>.json, holds what session/list
// needs ([Info]: cwd, additional directories, title, creation and update
// times, and whether the session is a hidden subagent child), so listing
// never reads a journal. A [Store] owns a state directory: it creates,
// opens, lists and deletes sessions and keeps the sidecars current,
// rewriting them atomically (temp file and rename). A sidecar lost or
// damaged by a crash is rebuilt from its journal.
//
// One process should write a given session at a time; the files are not
// locked. The journal and store start no goroutines.
package session
