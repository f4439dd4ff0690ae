// End-to-end test of the --affinity-cookie setting: a name net/http would
// drop without a word (so no cookie would ever be set) is a mistake at
// start, as README's Configuration section says of every bad value.

package main

import "testing"

func TestABadAffinityCookieNameStopsDshdAtStart(t *testing.T) {
	runMistakes(t, []mistake{
		{name: "an affinity cookie name no client keeps", args: []string{"serve", "--listen", "http://127.0.0.1:0", "--affinity-cookie", "my cookie"},
			want: []string{`--affinity-cookie "my cookie"`, "cookie name"}},
		{name: "an affinity cookie name in the file", file: `{"affinityCookie": "a;b"}`, args: []string{"serve", "--listen", "http://127.0.0.1:0"},
			want: []string{"FILE:1:20", "affinityCookie", "cookie name"}},
	})
}
