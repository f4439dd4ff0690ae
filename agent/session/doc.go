// Package session is a live session and its durable journal.
//
// A [Session] is one conversation. [New] is the one place one is built,
// from a [Config]: the client's sessions (acp/server), in-process subagent
// children (subagents/internal/inproc, from [Session.ChildConfig]) and
// test parents all go through it. A session owns its agent, its tool layer
// (over the daemon-wide tools; MCP tools are connected into it), its tools'
// environment (the workspace, the editor-side or local file system and
// runner), its permission policy — the mode and remembered answers of
// tools/permission, asking the editor through an Asker — or, for a child,
// the gate it was given, its delegation scope (Config.Delegation binds the
// subagent tool to it), and its journal. It runs one turn at a time
// ([Session.BeginTurn], [Turn.Run]) and keeps its state: the permission
// mode ([Session.SetMode]), the model ([Session.SetModel]) and the title it
// takes from its first prompt. ACP's modes and config options are how
// acp/server shows that state; they are not kept here.
//
// The journal is what makes a session survive the daemon. Each session has
// one append-only JSONL file, <id>.jsonl, in a state directory
// ($XDG_STATE_HOME/dshd/sessions by default, see [DefaultDir]). Every line
// is one [Record]: a kind ("meta" first, then "update", "message", "reset"
// and "state" records), a time, and data the journal never interprets. A
// record is written whole before the next one starts — with a single write
// of its line, or, for a large one (a 50 MB prompt), in consecutive writes
// as it is encoded, so that it is never copied in memory — so a crash can
// tear at most the last line; [OpenJournal] returns every complete record,
// logs and skips a torn or corrupt line, and the next append starts on a
// fresh line. [Journal.Sync] makes everything appended so far durable; a
// session calls it once per turn, when the turn ends ([Turn.Run]), before
// the turn's answer is sent, and closing the journal syncs it too; a
// change of mode, model or thinking is synced on its own
// ([Journal.AppendSaved]); nothing else syncs (not a tool's completion). A
// daemon killed mid-turn therefore keeps every record whose append
// returned, and loses to a machine crash at most what was appended since
// the last turn ended.
//
// Acknowledged means durable. A record that cannot be written, or a sync
// that fails (a full disk), makes the journal return a [*NotSavedError]
// until a Sync has written and synced everything again: it keeps the
// records it could not write in memory, in order (up to 64 MiB), and
// after a failed sync writes the bytes since the last good one again,
// checked against their checksum. Such a record stops the running turn,
// [Turn.Run] then returns the NotSavedError instead of a result, and
// [Session.BeginTurn] refuses new turns until the journal is saved again.
// A change of mode, model or thinking is made only once its record is
// written and synced; while the journal cannot save it is refused with
// the NotSavedError and nothing of it is kept, so that no crash undoes a
// change the client was told of.
// So that a full disk is rare, a store's [DiskLimits] bound how much it
// writes: a journal that reached its bound takes no new turn, a fork that
// would start there is not made, and while the state directory's file
// system is nearly full, or the sessions in it hold their bound (a count
// the store keeps: what it found at start, plus what it writes, minus
// what it deletes), no turn starts and no journal is created; each is a
// [*LimitError], checked before anything is run or recorded. The same
// refusals hold for a change of mode, model or thinking, during a turn
// too, and meanwhile a running background task's output is not
// recorded, nor a child agent's relayed update ([Session.RecordRelayed],
// which also stops the running turn with the LimitError): a turn is
// bounded by its own limits, but nothing of a turn's bounds those.
// A store keeps at most [DefaultOpenJournals] journal files open; the
// journal written least recently gives its file back and reopens it when
// it next writes, so idle sessions hold no descriptors.
//
// Beside each journal a small sidecar, <id>.json, holds what session/list
// needs ([Info]: cwd, additional directories, title, creation and update
// times, and whether the session is a hidden subagent child), so listing
// never reads a journal. A [Store] owns a state directory: it creates,
// opens, lists and deletes sessions and keeps the sidecars current,
// rewriting them atomically (temp file and rename). A sidecar lost or
// damaged by a crash is rebuilt from its journal; a change that could not
// be written is made with the next one or after the journal's next sync. [Create] and [Load] open
// a session's journal in its store before the live session is built over
// it.
//
// One process writes a given session at a time: a store locks each
// session it has open (an advisory lock on one byte of <dir>/.lock per
// session, which the kernel drops when the process ends), so another
// store neither opens nor deletes it ([ErrHeld]). A journal whose file is
// deleted or replaced all the same (a forced delete) finds out when it
// next reopens its file, when a turn begins and when its end is synced,
// and saves nothing more ([ErrJournalGone]): a turn is never acknowledged
// with records no load would read. The journal, the store and the session start no goroutines of
// their own; a session's turn runs on its caller's goroutine, and its
// agent's goroutines end before [Turn.Run] returns.
package session
