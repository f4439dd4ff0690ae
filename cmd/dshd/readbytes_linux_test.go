// End-to-end test of --max-read-bytes: a real dshd delegates to an acp
// agent (a shell script on real pipes) that reads a workspace file
// through the parent, once the file is over the setting and once under
// the default.

package main

import (
	"strings"
	"testing"

	"github.com/dshd/dshd/internal/testkit"
)

// TestAChildsReadOverMaxReadBytesIsRefusedNamingTheSettingLoggedOnce:
// with --max-read-bytes 65536, two reads of a 128 KiB file are refused
// (-32602, the child may ask for fewer lines), each answer naming the
// setting, and the daemon logs the refusal once; under the default both
// reads get the file. Before, the bound was a constant of 32 MiB that no
// setting changed, and a refusal was -32603 naming no setting.
func TestAChildsReadOverMaxReadBytesIsRefusedNamingTheSettingLoggedOnce(t *testing.T) {
	script := testdataScript(t, "readagent.sh")
	ws := t.TempDir()
	big := testkit.Write(t, ws, "big.txt", strings.Repeat("0123456789abcde\n", 8192))
	binding := "reader=acp,command=/bin/sh,args=" + script + ",env=READ_PATH=" + big
	const logged = "refused to read a file at once"
	for _, tc := range []struct {
		name  string
		args  []string
		want  string // what the child says of its two reads
		lines int    // log lines of the refusal
	}{
		{"--max-read-bytes 65536", []string{"--max-read-bytes", "65536"}, "-32602 too large to read at once: more than 65536 bytes (the limit --max-read-bytes)", 1},
		{"the default", nil, "[ok ", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--sandbox", "off", "--subagent", binding}, tc.args...)
			result, stderr := delegateOnce(t, "reader", nil, ws, args...)
			if strings.Count(result, tc.want) != 2 {
				t.Fatalf("the child said %q, want %q for both reads; stderr:\n%s", result, tc.want, stderr)
			}
			if n := strings.Count(stderr, logged); n != tc.lines {
				t.Fatalf("the refusal was logged %d times, want %d:\n%s", n, tc.lines, stderr)
			}
			if tc.lines > 0 && !strings.Contains(stderr, "setting=--max-read-bytes") {
				t.Errorf("the log line does not name the setting:\n%s", stderr)
			}
		})
	}
}
