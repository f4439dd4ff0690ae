// End-to-end test of README's GitHub Actions step: `dshd prompt --yes
// --json … > dshd-events.jsonl` "also leaves a line per approved action
// in the job's log". The question and its answer are no session/update,
// so with --json they must still go to stderr, the job's log.

package main

import (
	"strings"
	"testing"
)

// promptToWriteAFile runs `dshd prompt` with flags on "write it", whose
// model asks to create a.txt and then answers then (the text of a
// scripted rule: {{tool}} is what the tool said), and returns its stdout
// and stderr once it exited 0.
func promptToWriteAFile(t *testing.T, then string, flags ...string) (stdout, stderr string) {
	t.Helper()
	script := writeScript(t, `{"rules": [
  {"step": 0, "toolCalls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "x"}}]},
  {"step": 1, "text": "`+then+`"}]}`)
	args := append(append([]string{"prompt"}, flags...), "--model", "scripted:"+script, "--state-dir", t.TempDir(), "--cwd", t.TempDir(), "write it")
	code, stdout, stderr := runDshd(t, nil, args...)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	return stdout, stderr
}

func TestPromptJSONYesLogsEachApprovedActionOnStderr(t *testing.T) {
	stdout, stderr := promptToWriteAFile(t, "done", "--yes", "--json")
	if !strings.Contains(stderr, "? Create a.txt: allowed (--yes)\n") {
		t.Fatalf("stderr lacks the approved action:\n%s", stderr)
	}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if !strings.HasPrefix(line, "{") {
			t.Fatalf("stdout holds a line that is not JSON: %q", line)
		}
	}
}
