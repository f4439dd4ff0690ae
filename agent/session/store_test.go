// This file tests the store: creation, sidecars, listing, pagination and
// deletion.

package session

import (
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func newStore(t testing.TB, opts *StoreOptions) *Store {
	t.Helper()
	s, err := NewStore(filepath.Join(t.TempDir(), "state", "sessions"), opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustCreate(t testing.TB, s *Store, m Meta) {
	t.Helper()
	j, err := s.Create(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
}

var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

func TestNewStore(t *testing.T) {
	s := newStore(t, nil)
	st, err := os.Stat(s.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o700 {
		t.Errorf("state directory mode %v, want 0700", st.Mode().Perm())
	}
	if !filepath.IsAbs(s.Dir()) {
		t.Errorf("Dir() = %q is not absolute", s.Dir())
	}
}

func TestDefaultDir(t *testing.T) {
	t.Run("XDG_STATE_HOME wins when absolute", func(t *testing.T) {
		t.Setenv("XDG_STATE_HOME", "/var/lib/me")
		if got, err := DefaultDir(); err != nil || got != "/var/lib/me/dshd/sessions" {
			t.Fatalf("got %q, %v", got, err)
		}
	})
	for _, v := range []string{"", "relative/state"} {
		t.Run(fmt.Sprintf("XDG_STATE_HOME=%q falls back to the home directory", v), func(t *testing.T) {
			t.Setenv("XDG_STATE_HOME", v)
			t.Setenv("HOME", "/home/dev")
			if got, err := DefaultDir(); err != nil || got != "/home/dev/.local/state/dshd/sessions" {
				t.Fatalf("got %q, %v", got, err)
			}
		})
	}
}

func TestStoreCreateAndOpen(t *testing.T) {
	now := stepClock()
	s := newStore(t, &StoreOptions{Now: now})
	meta := Meta{SessionID: "s1", Cwd: "/home/dev/shop", AdditionalDirectories: []string{"/home/dev/lib"}}
	j, err := s.Create(meta)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("the sidecar starts from the meta", func(t *testing.T) {
		info, err := s.Info("s1")
		if err != nil {
			t.Fatal(err)
		}
		if info.Cwd != meta.Cwd || !slices.Equal(info.AdditionalDirectories, meta.AdditionalDirectories) ||
			info.CreatedAt.IsZero() || !info.UpdatedAt.Equal(info.CreatedAt) || !info.Listed() {
			t.Errorf("info = %+v", info)
		}
		st, err := os.Stat(filepath.Join(s.Dir(), "s1.json"))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("sidecar mode %v, %v", st.Mode().Perm(), err)
		}
	})
	t.Run("a synced append moves updatedAt to the record's time", func(t *testing.T) {
		before, _ := s.Info("s1")
		if err := j.Append(KindUpdate, "x"); err != nil {
			t.Fatal(err)
		}
		if err := j.Sync(); err != nil {
			t.Fatal(err)
		}
		after, _ := s.Info("s1")
		if !after.UpdatedAt.After(before.UpdatedAt) {
			t.Errorf("updatedAt %v did not move past %v", after.UpdatedAt, before.UpdatedAt)
		}
	})
	t.Run("creating it again fails with ErrHeld while it is open", func(t *testing.T) {
		if _, err := s.Create(meta); !errors.Is(err, ErrHeld) {
			t.Fatalf("got %v", err)
		}
	})
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	t.Run("creating it again fails with ErrExists once it is closed", func(t *testing.T) {
		if _, err := s.Create(meta); !errors.Is(err, ErrExists) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("opening returns the meta record first", func(t *testing.T) {
		j, recs, err := s.Open("s1")
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
		var m Meta
		if len(recs) != 2 || recs[0].Decode(&m) != nil || m.SessionID != "s1" || m.Cwd != meta.Cwd {
			t.Fatalf("records %+v, meta %+v", recs, m)
		}
	})
	t.Run("Exists tells a journal from nothing", func(t *testing.T) {
		if !s.Exists("s1") || s.Exists("s2") || s.Exists("../s1") {
			t.Error("Exists is wrong")
		}
	})
	t.Run("unknown and invalid ids are not found", func(t *testing.T) {
		for _, id := range []string{"s2", "../s1", ""} {
			if _, _, err := s.Open(id); !errors.Is(err, ErrNotFound) {
				t.Errorf("Open(%q) = %v", id, err)
			}
			if _, err := s.Info(id); !errors.Is(err, ErrNotFound) {
				t.Errorf("Info(%q) = %v", id, err)
			}
			if err := s.Touch(id, t0); !errors.Is(err, ErrNotFound) {
				t.Errorf("Touch(%q) = %v", id, err)
			}
		}
		if _, err := s.Create(Meta{SessionID: "a/b"}); !errors.Is(err, ErrInvalidID) {
			t.Errorf("Create(a/b) = %v", err)
		}
	})
	t.Run("SetTitle and Touch change the sidecar", func(t *testing.T) {
		if err := s.SetTitle("s1", "Rename Cart"); err != nil {
			t.Fatal(err)
		}
		if err := s.Touch("s1", t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		info, _ := s.Info("s1")
		if info.Title != "Rename Cart" || !info.UpdatedAt.Equal(t0.Add(time.Hour)) {
			t.Errorf("info = %+v", info)
		}
	})
}

func TestStoreRebuildsSidecars(t *testing.T) {
	h := &warnCounter{}
	s := newStore(t, &StoreOptions{Logger: slog.New(h), Now: stepClock()})
	j, err := s.Create(Meta{SessionID: "r", Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	for _, title := range []string{"first", "second"} {
		if err := j.Append(KindState, map[string]string{"title": title}); err != nil {
			t.Fatal(err)
		}
	}
	j.Append(KindState, map[string]string{"modeId": "auto"})
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	want, err := s.Info("r")
	if err != nil {
		t.Fatal(err)
	}
	sidecar := filepath.Join(s.Dir(), "r.json")

	t.Run("Open rebuilds a missing sidecar from the journal", func(t *testing.T) {
		if err := os.Remove(sidecar); err != nil {
			t.Fatal(err)
		}
		j, _, err := s.Open("r")
		if err != nil {
			t.Fatal(err)
		}
		j.Close()
		got, err := s.Info("r")
		if err != nil || got.Title != "second" || !got.UpdatedAt.Equal(want.UpdatedAt) || got.Cwd != "/w" {
			t.Fatalf("rebuilt %+v, %v; want title second, updatedAt %v", got, err, want.UpdatedAt)
		}
	})
	t.Run("List rebuilds a damaged sidecar from the journal", func(t *testing.T) {
		if err := os.WriteFile(sidecar, []byte(`{"sessionId":"r","cw`), 0o600); err != nil {
			t.Fatal(err)
		}
		infos, _, err := s.List("", "", 0)
		if err != nil || len(infos) != 1 || infos[0].Title != "second" {
			t.Fatalf("List = %+v, %v", infos, err)
		}
		if _, err := s.Info("r"); err != nil {
			t.Fatalf("sidecar was not rewritten: %v", err)
		}
	})
	t.Run("List skips a sidecar whose journal is gone", func(t *testing.T) {
		if err := os.WriteFile(filepath.Join(s.Dir(), "orphan.json"), []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
		infos, _, err := s.List("", "", 0)
		if err != nil || len(infos) != 1 {
			t.Fatalf("List = %+v, %v", infos, err)
		}
	})
	if h.count() == 0 {
		t.Error("no warnings were logged")
	}
}

func TestStoreDelete(t *testing.T) {
	s := newStore(t, nil)
	mustCreate(t, s, Meta{SessionID: "keep", Cwd: "/w"})
	j, err := s.Create(Meta{SessionID: "gone", Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete("gone"); err != nil {
		t.Fatal(err)
	}

	t.Run("the session leaves the list and the disk", func(t *testing.T) {
		infos, _, err := s.List("", "", 0)
		if err != nil || len(infos) != 1 || infos[0].SessionID != "keep" {
			t.Fatalf("List = %+v, %v", infos, err)
		}
		if s.Exists("gone") {
			t.Error("the journal is still there")
		}
		if _, _, err := s.Open("gone"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Open = %v", err)
		}
	})
	t.Run("an open session is not deleted", func(t *testing.T) {
		j, _, err := s.Open("keep")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Delete("keep"); !errors.Is(err, ErrHeld) {
			t.Fatalf("Delete of an open session = %v, want ErrHeld", err)
		}
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
		if !s.Exists("keep") {
			t.Fatal("the refused delete removed the journal")
		}
		if _, err := s.Info("keep"); err != nil {
			t.Fatalf("the refused delete removed the sidecar: %v", err)
		}
	})
	t.Run("a directory where a journal would be is not deleted, nor the rest", func(t *testing.T) {
		mustCreate(t, s, Meta{SessionID: "odd", Cwd: "/w"})
		journal := JournalPath(s.Dir(), "odd")
		if err := os.Rename(journal, journal+".moved"); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(journal, 0o700); err != nil {
			t.Fatal(err)
		}
		err := s.Delete("odd")
		if !errors.Is(err, ErrNotSessionFile) || !strings.Contains(err.Error(), journal+" is a directory") {
			t.Fatalf("Delete = %v, want ErrNotSessionFile naming %s", err, journal)
		}
		if fi, err := os.Stat(journal); err != nil || !fi.IsDir() {
			t.Fatalf("the directory was removed: %v", err)
		}
		if _, err := s.Info("odd"); err != nil {
			t.Fatalf("the refused delete removed the sidecar: %v", err)
		}
		if s.Leftover("odd") != "" {
			t.Fatal("a sidecar with a directory for a journal is reported as left over")
		}
		os.Remove(journal)
		if got := s.Leftover("odd"); got != filepath.Join(s.Dir(), "odd.json") {
			t.Fatalf("Leftover of a sidecar without a journal = %q", got)
		}
		if err := s.Delete("odd"); err != nil || s.Leftover("odd") != "" {
			t.Fatalf("Delete of a sidecar without a journal = %v, left over %q", err, s.Leftover("odd"))
		}
		os.Remove(journal + ".moved")
	})
	t.Run("deleting an unknown or invalid id is not an error", func(t *testing.T) {
		for _, id := range []string{"gone", "never", "../keep", ""} {
			if err := s.Delete(id); err != nil {
				t.Errorf("Delete(%q) = %v", id, err)
			}
		}
		if !s.Exists("keep") {
			t.Error("Delete(../keep) removed keep")
		}
	})
	t.Run("only the two files of the session were removed", func(t *testing.T) {
		entries, err := os.ReadDir(s.Dir())
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if !slices.Equal(names, []string{lockName, "keep.json", "keep.jsonl"}) {
			t.Errorf("directory holds %v", names)
		}
	})
}

// fillStore creates n listed sessions with updatedAt values that tie in
// groups of three, in two cwds, plus subagent children and a hidden
// session that must never be listed.
func fillStore(t testing.TB, s *Store, n int) {
	t.Helper()
	for i := range n {
		id := fmt.Sprintf("s%04d", i)
		cwd := "/a"
		if i%4 == 0 {
			cwd = "/b"
		}
		mustCreate(t, s, Meta{SessionID: id, Cwd: cwd, CreatedAt: t0})
		if err := s.Touch(id, t0.Add(time.Duration(i/3)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	mustCreate(t, s, Meta{SessionID: "child", Cwd: "/a", ParentID: "s0000", Depth: 1, CreatedAt: t0})
	mustCreate(t, s, Meta{SessionID: "grandchild", Cwd: "/b", ParentID: "child", Depth: 2, CreatedAt: t0})
	mustCreate(t, s, Meta{SessionID: "hidden", Cwd: "/a", Hidden: true, CreatedAt: t0})
}

func TestStoreList(t *testing.T) {
	const n = 37
	s := newStore(t, nil)
	fillStore(t, s, n)
	// Stray files a List must ignore.
	for _, name := range []string{".s0001.json.123.tmp", "notes.txt", "bad id.json"} {
		if err := os.WriteFile(filepath.Join(s.Dir(), name), []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(s.Dir(), "dir.json"), 0o700); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name     string
		cwd      string
		pageSize int
		want     int
	}{
		{"pages of four visit every session once", "", 4, n},
		{"pages of one visit every session once", "", 1, n},
		{"a page larger than the list is the only page", "", 1000, n},
		{"the default page size still visits every session", "", 0, n},
		{"a cwd filter keeps exact matches only", "/b", 3, (n + 3) / 4},
		{"the other cwd gets the rest", "/a", 5, n - (n+3)/4},
		{"an unknown cwd lists nothing", "/a/", 5, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []Info
			cursor := ""
			for pages := 0; ; pages++ {
				if pages > n+1 {
					t.Fatal("pagination does not end")
				}
				page, next, err := s.List(tt.cwd, cursor, tt.pageSize)
				if err != nil {
					t.Fatal(err)
				}
				if len(page) > max(tt.pageSize, 0) && tt.pageSize > 0 {
					t.Fatalf("page of %d, want at most %d", len(page), tt.pageSize)
				}
				got = append(got, page...)
				if next == "" {
					break
				}
				cursor = next
			}
			if len(got) != tt.want {
				t.Fatalf("listed %d sessions, want %d", len(got), tt.want)
			}
			seen := map[string]bool{}
			for i, info := range got {
				if seen[info.SessionID] {
					t.Fatalf("%s listed twice", info.SessionID)
				}
				seen[info.SessionID] = true
				if !info.Listed() || strings.HasPrefix(info.SessionID, "child") || info.SessionID == "hidden" {
					t.Errorf("%s should not be listed", info.SessionID)
				}
				if tt.cwd != "" && info.Cwd != tt.cwd {
					t.Errorf("%s has cwd %q", info.SessionID, info.Cwd)
				}
				if i > 0 {
					prev := got[i-1]
					if prev.UpdatedAt.Before(info.UpdatedAt) || (prev.UpdatedAt.Equal(info.UpdatedAt) && prev.SessionID > info.SessionID) {
						t.Errorf("%s listed before %s", prev.SessionID, info.SessionID)
					}
				}
			}
		})
	}

	t.Run("the newest session comes first", func(t *testing.T) {
		page, next, err := s.List("", "", 2)
		if err != nil || len(page) != 2 || next == "" {
			t.Fatalf("List = %v, %q, %v", page, next, err)
		}
		if page[0].SessionID != "s0036" || page[1].SessionID != "s0033" {
			t.Errorf("first page %s, %s", page[0].SessionID, page[1].SessionID)
		}
	})
	t.Run("an empty directory lists an empty page", func(t *testing.T) {
		page, next, err := newStore(t, nil).List("", "", 0)
		if err != nil || len(page) != 0 || next != "" {
			t.Fatalf("List = %v, %q, %v", page, next, err)
		}
	})
}

func TestStoreListInvalidCursor(t *testing.T) {
	s := newStore(t, nil)
	fillStore(t, s, 3)
	b64 := base64.RawURLEncoding.EncodeToString
	for _, c := range []string{
		"!!!",
		"c2",
		b64([]byte("not json")),
		b64([]byte(`{"u":1,"i":"../x"}`)),
		b64([]byte(`{"u":1,"i":""}`)),
		b64([]byte(`{"u":"x","i":"s0001"}`)),
		b64([]byte(`{"u":1,"i":"s0001","x":2}`)),
		b64([]byte(`{"u":1,"i":"s0001"} {}`)),
		base64.StdEncoding.EncodeToString([]byte(`{"u":1,"i":"s0001"}`)),
	} {
		if _, _, err := s.List("", c, 0); !errors.Is(err, ErrInvalidCursor) {
			t.Errorf("List(cursor %q) = %v, want ErrInvalidCursor", c, err)
		}
	}
	t.Run("a cursor whose session was deleted still continues after it", func(t *testing.T) {
		page, next, err := s.List("", "", 1)
		if err != nil || next == "" {
			t.Fatal(err)
		}
		if err := s.Delete(page[0].SessionID); err != nil {
			t.Fatal(err)
		}
		rest, _, err := s.List("", next, 10)
		if err != nil || len(rest) != 2 {
			t.Fatalf("rest = %v, %v", rest, err)
		}
	})
}

func BenchmarkStoreList(b *testing.B) {
	s := newStore(b, nil)
	fillStore(b, s, 1000)
	b.ReportAllocs()
	for b.Loop() {
		page, _, err := s.List("", "", DefaultPageSize)
		if err != nil || len(page) != DefaultPageSize {
			b.Fatal(len(page), err)
		}
	}
}

func TestStoreListSeesOtherProcessesWrites(t *testing.T) {
	a := newStore(t, nil)
	fillStore(t, a, 3)
	b, err := NewStore(a.Dir(), nil) // another daemon on the same state directory
	if err != nil {
		t.Fatal(err)
	}
	title := func(s *Store, id string) string {
		t.Helper()
		infos, _, err := s.List("", "", 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range infos {
			if i.SessionID == id {
				return i.Title
			}
		}
		return "<missing>"
	}
	if got := title(a, "s0001"); got != "" {
		t.Fatalf("title %q", got)
	}
	for _, want := range []string{"one", "two", "six"} { // same length: same file size
		if err := b.SetTitle("s0001", want); err != nil {
			t.Fatal(err)
		}
		if got := title(a, "s0001"); got != want {
			t.Fatalf("the first store lists title %q, want %q", got, want)
		}
	}
	mustCreate(t, b, Meta{SessionID: "new", Cwd: "/a", CreatedAt: t0.Add(time.Hour)})
	if got := title(a, "new"); got != "" {
		t.Fatalf("a session created elsewhere lists as %q", got)
	}
	if err := b.Delete("new"); err != nil {
		t.Fatal(err)
	}
	if got := title(a, "new"); got != "<missing>" {
		t.Fatalf("a session deleted elsewhere is still listed")
	}
}
