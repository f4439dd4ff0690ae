package choice

import "testing"

type color string

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, s string
		choices []color
		want    color
		err     string
	}{
		{name: "empty is the first", s: "", choices: []color{"red", "green"}, want: "red"},
		{name: "the first", s: "red", choices: []color{"red", "green"}, want: "red"},
		{name: "another", s: "green", choices: []color{"red", "green", "blue"}, want: "green"},
		{name: "one choice", s: "x", choices: []color{"red"}, err: `color "x": want red`},
		{name: "two choices", s: "x", choices: []color{"red", "green"}, err: `color "x": want red or green`},
		{name: "three choices", s: "Red", choices: []color{"red", "green", "blue"}, err: `color "Red": want red, green or blue`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse("color", tc.s, tc.choices...)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err || got != "" {
					t.Fatalf("Parse(%q) = %q, %v; want the error %s", tc.s, got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Parse(%q) = %q, %v; want %q", tc.s, got, err, tc.want)
			}
		})
	}
}
