package session

import (
	"bytes"
	"errors"
	"os"
	"testing"
)

func TestReadJournal_ReadsEveryCompleteRecordAndNeverWrites(t *testing.T) {
	dir := t.TempDir()
	j, err := CreateJournal(dir, "s1", map[string]string{"sessionId": "s1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Append(KindUpdate, map[string]string{"n": "1"}); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	// A torn last line, as a crash leaves it: OpenJournal would start the
	// next record on a fresh line; a reader must leave the file as it is.
	f, err := os.OpenFile(JournalPath(dir, "s1"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"k":"update","d":{"n":`)
	f.Close()
	before, _ := os.ReadFile(JournalPath(dir, "s1"))

	recs, err := ReadJournal(dir, "s1", nil)
	if err != nil || len(recs) != 2 || recs[0].Kind != KindMeta || recs[1].Kind != KindUpdate {
		t.Fatalf("records %+v, err %v; want the meta and the one complete update", recs, err)
	}
	if after, _ := os.ReadFile(JournalPath(dir, "s1")); !bytes.Equal(before, after) {
		t.Errorf("reading changed the journal:\n%q\n%q", before, after)
	}
	if _, err := ReadJournal(dir, "s2", nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("a missing journal: %v, want ErrNotFound", err)
	}
}
