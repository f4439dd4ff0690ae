package settingnames

import "testing"

func TestFillNamesTheEmptyFieldsAfterThemselvesAndKeepsTheOthers(t *testing.T) {
	type names struct {
		MaxLineSize, WriteTimeout string
		count                     int
	}
	n := names{WriteTimeout: "--write-timeout", count: 3}
	Fill(&n)
	if want := (names{MaxLineSize: "MaxLineSize", WriteTimeout: "--write-timeout", count: 3}); n != want {
		t.Fatalf("got %+v, want %+v", n, want)
	}
}
