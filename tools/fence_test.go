package tools

import "testing"

func TestFence_IsLongerThanAnyBacktickRunInTheText(t *testing.T) {
	for _, tc := range []struct {
		name, in, lang, want string
	}{
		{"plain text gets three backticks and a final newline", "ls -l", "sh", "```sh\nls -l\n```"},
		{"a final newline is not doubled", "ok\n", "console", "```console\nok\n```"},
		{"empty text is an empty block", "", "console", "```console\n```"},
		{"a run of three makes a fence of four", "a ``` b", "sh", "````sh\na ``` b\n````"},
		{"the longest run counts, not the sum", "`` x ````` y `", "", "``````\n`` x ````` y `\n``````"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Fence(tc.in, tc.lang); got != tc.want {
				t.Errorf("Fence(%q, %q) = %q, want %q", tc.in, tc.lang, got, tc.want)
			}
		})
	}
}
