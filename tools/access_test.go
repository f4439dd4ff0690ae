package tools

import "testing"

func TestAccessConflicts(t *testing.T) {
	all := Access{ReadsAll: true, WritesAll: true}
	readsAll := Access{ReadsAll: true}
	read := func(p ...string) Access { return Access{Reads: p} }
	write := func(p ...string) Access { return Access{Writes: p} }
	tests := []struct {
		name string
		a, b Access
		want bool
	}{
		{"two reads of one file", read("/w/a"), read("/w/a"), false},
		{"a write and a read of one file", write("/w/a"), read("/w/a"), true},
		{"a read and a later write of one file", read("/w/a"), write("/w/a"), true},
		{"two writes of one file", write("/w/a"), write("/w/a"), true},
		{"writes of two files", write("/w/a"), write("/w/b"), false},
		{"a listing and a write under it", read("/w/sub"), write("/w/sub/x"), true},
		{"a name that only shares a prefix", write("/w/a"), read("/w/ab"), false},
		{"the root covers everything", read("/"), write("/w/a"), true},
		{"a command and anything that touches files", all, read("/w/a"), true},
		{"a command and a tool that touches nothing", all, Access{}, false},
		{"a reader of anything and a write", readsAll, write("/w/a"), true},
		{"two readers of anything", readsAll, readsAll, false},
		{"a reader of anything and a read", readsAll, read("/w/a"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.a.Conflicts(tt.b); got != tt.want {
				t.Errorf("%+v.Conflicts(%+v) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
			if got := tt.b.Conflicts(tt.a); got != tt.want {
				t.Errorf("not symmetric: %+v.Conflicts(%+v) = %v", tt.b, tt.a, got)
			}
		})
	}
}
