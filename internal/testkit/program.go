package testkit

import (
	"os"
	"testing"
)

// Executable returns the path of the test binary, for a command that
// runs this program (a child it plays a part in, or one it is taken for,
// such as a child dshd).
func Executable(t testing.TB) string {
	t.Helper()
	p, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return p
}
