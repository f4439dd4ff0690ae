package mdfiles_test

import (
	"syscall"
	"testing"

	"github.com/dshd/dshd/internal/mdfiles"
	"github.com/dshd/dshd/internal/testkit"
)

func TestRead_AFIFOSwappedInIsNoWait(t *testing.T) {
	st := goneStamp(t)
	if err := syscall.Mkfifo(st.Path, 0o644); err != nil {
		t.Fatal(err)
	}
	testkit.Within(t, "a read of a FIFO nobody writes", func() {
		if data, err := mdfiles.Read(st); len(data) != 0 {
			t.Fatalf("Read = %q, %v", data, err)
		}
	})
}
