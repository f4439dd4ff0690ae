//go:build unix

package mdfiles_test

import (
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/mdfiles"
	"github.com/dshd/dshd/internal/testkit"
)

// A FIFO where a directory of Markdown files was expected is refused at
// once: its open does not wait for a writer.
func TestList_AFIFOInPlaceOfTheDirectoryIsRefusedAtOnce(t *testing.T) {
	fifo := testkit.FIFO(t, t.TempDir(), ".dshd/commands")
	testkit.Within(t, "the listing of a FIFO", func() {
		files, more, err := mdfiles.List("", fifo, 10)
		if err == nil || !strings.Contains(err.Error(), "not a directory") || files != nil || more != 0 {
			t.Fatalf("List = %v, %d, %v; want not a directory", files, more, err)
		}
	})
}
