// This file tests the journal on a disk that fails: writes and syncs that
// return ENOSPC, records written again once space returns, and records the
// OS dropped after a failed sync.

package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// faults makes the journal files it opens fail on purpose: every write
// while write is set (after writing half, when short), the next failNext
// writes with ENOSPC, the failNth-th write from now with ENOSPC, every sync
// while sync is set. It records where writes landed.
type faults struct {
	mu       sync.Mutex
	write    error
	failNext int
	failNth  int
	short    bool
	sync     error
	writes   []int64 // offsets of successful writes
}

func (fl *faults) set(write, sync error) {
	fl.mu.Lock()
	fl.write, fl.sync = write, sync
	fl.mu.Unlock()
}

func (fl *faults) open(path string, flag int, perm os.FileMode) (journalFile, error) {
	f, err := openOSFile(path, flag, perm)
	if err != nil {
		return nil, err
	}
	return &faultyFile{journalFile: f, path: path, fl: fl}, nil
}

// writtenAt reports whether a successful write started at off.
func (fl *faults) writtenAt(off int64) int {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	n := 0
	for _, o := range fl.writes {
		if o == off {
			n++
		}
	}
	return n
}

type faultyFile struct {
	journalFile
	path string
	fl   *faults
}

func (f *faultyFile) WriteAt(b []byte, off int64) (int, error) {
	f.fl.mu.Lock()
	werr, short := f.fl.write, f.fl.short
	if werr == nil && f.fl.failNext > 0 {
		f.fl.failNext--
		werr = syscall.ENOSPC
	}
	if werr == nil && f.fl.failNth > 0 {
		if f.fl.failNth--; f.fl.failNth == 0 {
			werr = syscall.ENOSPC
		}
	}
	f.fl.mu.Unlock()
	if werr != nil {
		n := 0
		if short {
			n, _ = f.journalFile.WriteAt(b[:len(b)/2], off)
		}
		return n, &fs.PathError{Op: "write", Path: f.path, Err: werr}
	}
	n, err := f.journalFile.WriteAt(b, off)
	if err == nil {
		f.fl.mu.Lock()
		f.fl.writes = append(f.fl.writes, off)
		f.fl.mu.Unlock()
	}
	return n, err
}

func (f *faultyFile) Datasync() error {
	f.fl.mu.Lock()
	serr := f.fl.sync
	f.fl.mu.Unlock()
	if serr != nil {
		return &fs.PathError{Op: "fdatasync", Path: f.path, Err: serr}
	}
	return f.journalFile.Datasync()
}

// faultyJournal creates journal id in dir over files that fail on fl's
// word.
func faultyJournal(t *testing.T, dir string, fl *faults) *Journal {
	t.Helper()
	j, err := CreateJournal(dir, "full", "meta", &JournalOptions{open: fl.open})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return j
}

// wantNotSaved checks that err says records were not saved because of
// ENOSPC.
func wantNotSaved(t *testing.T, what string, err error, lost bool) {
	t.Helper()
	var ns *NotSavedError
	if !errors.As(err, &ns) || !errors.Is(err, syscall.ENOSPC) || ns.Lost != lost {
		t.Fatalf("%s = %v, want a NotSavedError (lost %v) for ENOSPC", what, err, lost)
	}
}

// journalData reads back the data of every record of journal "full".
func journalData(t *testing.T, dir string) ([]string, int) {
	t.Helper()
	j, recs, h := openCounted(t, dir, "full")
	j.Close()
	var out []string
	for _, r := range recs {
		out = append(out, string(r.Data))
	}
	return out, h.count()
}

func TestJournalOnAFullDisk(t *testing.T) {
	for _, short := range []bool{false, true} {
		t.Run(fmt.Sprintf("records that cannot be written are held, in order, until a sync writes them (short write %v)", short), func(t *testing.T) {
			dir := t.TempDir()
			fl := &faults{short: short}
			j := faultyJournal(t, dir, fl)
			if err := j.Append(KindUpdate, "a"); err != nil {
				t.Fatal(err)
			}
			fl.set(syscall.ENOSPC, nil)
			wantNotSaved(t, "Append on a full disk", j.Append(KindUpdate, "b"), false)
			wantNotSaved(t, "the next Append", j.Append(KindUpdate, "c"), false)
			wantNotSaved(t, "Sync on a full disk", j.Sync(), false)
			wantNotSaved(t, "Err", j.Err(), false)
			if got, _ := journalData(t, dir); len(got) != 2 {
				t.Fatalf("on the full disk the file holds %q, want the meta and a", got)
			}
			fl.set(nil, nil)
			if err := j.Sync(); err != nil {
				t.Fatalf("Sync once space returned = %v", err)
			}
			if err := j.Err(); err != nil {
				t.Fatalf("Err after the journal was saved again = %v", err)
			}
			if err := j.Append(KindUpdate, "d"); err != nil {
				t.Fatal(err)
			}
			j.Close()
			got, warnings := journalData(t, dir)
			if strings.Join(got, " ") != `"meta" "a" "b" "c" "d"` || warnings != 0 {
				t.Fatalf("records %q with %d warnings, want meta a b c d and none", got, warnings)
			}
		})
	}

	t.Run("after a failed sync the records since the last good one are written again before a sync counts", func(t *testing.T) {
		dir := t.TempDir()
		fl := &faults{}
		j := faultyJournal(t, dir, fl)
		if err := j.Append(KindUpdate, "a"); err != nil {
			t.Fatal(err)
		}
		if err := j.Sync(); err != nil {
			t.Fatal(err)
		}
		st, _ := os.Stat(j.Path())
		bAt := st.Size()
		if err := j.Append(KindUpdate, "b"); err != nil {
			t.Fatal(err)
		}
		fl.set(nil, syscall.ENOSPC)
		wantNotSaved(t, "Sync that fails", j.Sync(), false)
		wantNotSaved(t, "Append after it", j.Append(KindUpdate, "c"), false)
		fl.set(nil, nil)
		if err := j.Sync(); err != nil {
			t.Fatalf("Sync once the disk works = %v", err)
		}
		if n := fl.writtenAt(bAt); n != 2 {
			t.Fatalf("record b was written %d times at its offset, want twice (once again after the failed sync)", n)
		}
		j.Close()
		if got, warnings := journalData(t, dir); strings.Join(got, " ") != `"meta" "a" "b" "c"` || warnings != 0 {
			t.Fatalf("records %q with %d warnings", got, warnings)
		}
	})

	t.Run("records the OS dropped after a failed sync are lost, and the journal refuses every record after", func(t *testing.T) {
		dir := t.TempDir()
		fl := &faults{}
		j := faultyJournal(t, dir, fl)
		if err := j.Sync(); err != nil {
			t.Fatal(err)
		}
		st, _ := os.Stat(j.Path())
		if err := j.Append(KindUpdate, "b"); err != nil {
			t.Fatal(err)
		}
		fl.set(nil, syscall.ENOSPC)
		wantNotSaved(t, "Sync that fails", j.Sync(), false)
		// What the kernel may do after a failed writeback: the cached
		// pages go, and the file reads what the disk had.
		f, err := os.OpenFile(j.Path(), os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteAt(make([]byte, 4), st.Size())
		f.Close()
		fl.set(nil, nil)
		wantNotSaved(t, "Sync once the disk works", j.Sync(), true)
		wantNotSaved(t, "Append", j.Append(KindUpdate, "c"), true)
		if err := j.Close(); err == nil {
			t.Fatal("Close of a journal that lost records says nothing")
		}
		if got, _ := journalData(t, dir); len(got) != 1 {
			t.Fatalf("records %q, want only the meta", got)
		}
	})

	t.Run("past 64 MiB held records are lost, not kept without bound", func(t *testing.T) {
		dir := t.TempDir()
		fl := &faults{}
		j := faultyJournal(t, dir, fl)
		fl.set(syscall.ENOSPC, nil)
		big := strings.Repeat("x", 1<<20)
		var err error
		for range maxPending>>20 + 1 {
			err = j.Append(KindUpdate, big)
		}
		wantNotSaved(t, "the Append past the bound", err, true)
		if j.pendingBytes != 0 {
			t.Fatalf("%d bytes still held", j.pendingBytes)
		}
		fl.set(nil, nil)
		wantNotSaved(t, "Sync once space returned", j.Sync(), true)
	})

	t.Run("a journal that cannot be created leaves no file", func(t *testing.T) {
		dir := t.TempDir()
		fl := &faults{}
		fl.set(syscall.ENOSPC, nil)
		if _, err := CreateJournal(dir, "full", "meta", &JournalOptions{open: fl.open}); !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("CreateJournal on a full disk = %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, "full.jsonl")); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("the journal file is there: %v", err)
		}
	})
}

// openJournalFiles counts this process's descriptors open on journal
// files in dir.
func openJournalFiles(t *testing.T, dir string) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd to count descriptors:", err)
	}
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && filepath.Dir(target) == dir && strings.HasSuffix(target, ".jsonl") {
			n++
		}
	}
	return n
}

func TestStoreKeepsABoundedNumberOfJournalFilesOpen(t *testing.T) {
	const limit, sessions = 4, 20
	s, err := NewStore(t.TempDir(), &StoreOptions{OpenJournals: limit})
	if err != nil {
		t.Fatal(err)
	}
	js := make([]*Journal, sessions)
	for i := range js {
		if js[i], err = s.Create(Meta{SessionID: fmt.Sprintf("s%d", i), Cwd: "/w"}); err != nil {
			t.Fatal(err)
		}
		defer js[i].Close()
	}
	for round := range 3 {
		for i, j := range js {
			if err := j.Append(KindUpdate, fmt.Sprintf("r%d", round)); err != nil {
				t.Fatal(err)
			}
			if i%3 == 0 {
				if err := j.Sync(); err != nil {
					t.Fatal(err)
				}
			}
			if n := openJournalFiles(t, s.Dir()); n > limit {
				t.Fatalf("%d journal files open, limit %d", n, limit)
			}
		}
	}
	for _, j := range js {
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if n := openJournalFiles(t, s.Dir()); n != 0 {
		t.Fatalf("%d journal files open after every journal closed", n)
	}
	for i := range js {
		j, recs, err := s.Open(fmt.Sprintf("s%d", i))
		if err != nil {
			t.Fatal(err)
		}
		j.Close()
		if len(recs) != 4 || string(recs[3].Data) != `"r2"` {
			t.Fatalf("session %d: records %+v", i, recs)
		}
	}
}

func TestSidecarsOnAFullDisk(t *testing.T) {
	fl := &faults{}
	s, err := NewStore(t.TempDir(), &StoreOptions{open: fl.open})
	if err != nil {
		t.Fatal(err)
	}
	j, err := s.Create(Meta{SessionID: "side", Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	title := func() string {
		t.Helper()
		info, err := s.Info("side")
		if err != nil {
			t.Fatal(err)
		}
		return info.Title
	}

	fl.set(syscall.ENOSPC, nil)
	if err := s.SetTitle("side", "first"); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("SetTitle on a full disk = %v", err)
	}
	if got := title(); got != "" {
		t.Fatalf("the sidecar was changed to title %q", got)
	}
	if infos, _, err := s.List("", "", 0); err != nil || len(infos) != 1 {
		t.Fatalf("List on a full disk = %+v, %v", infos, err)
	}
	if err := s.Update("side", func(i *Info) { i.AdditionalDirectories = []string{"/extra"} }); err == nil {
		t.Fatal("Update on a full disk succeeded")
	}
	fl.set(nil, nil)
	t.Run("a change that could not be written is made when the journal next syncs", func(t *testing.T) {
		if err := j.Append(KindUpdate, "x"); err != nil {
			t.Fatal(err)
		}
		if err := j.Sync(); err != nil {
			t.Fatal(err)
		}
		info, err := s.Info("side")
		if err != nil || info.Title != "first" || len(info.AdditionalDirectories) != 1 {
			t.Fatalf("sidecar after the sync = %+v, %v", info, err)
		}
	})
	t.Run("changes that could not be written come before a later one", func(t *testing.T) {
		fl.set(syscall.ENOSPC, nil)
		s.SetTitle("side", "second")
		fl.set(nil, nil)
		if err := s.SetTitle("side", "third"); err != nil {
			t.Fatal(err)
		}
		if got := title(); got != "third" {
			t.Fatalf("title %q, want the last one set", got)
		}
	})
	t.Run("no temp file is left behind", func(t *testing.T) {
		entries, _ := os.ReadDir(s.Dir())
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".tmp") {
				t.Fatalf("left behind: %s", e.Name())
			}
		}
	})
}
