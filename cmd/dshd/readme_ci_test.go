// End-to-end test of README's GitHub Actions step: `dshd prompt --yes
// --json … > dshd-events.jsonl` "also leaves a line per approved action
// in the job's log". The question and its answer are no session/update,
// so with --json they must still go to stderr, the job's log.

package main

import (
	"strings"
	"testing"
)

func TestPromptJSONYesLogsEachApprovedActionOnStderr(t *testing.T) {
	script := writeScript(t, `{"rules": [
  {"step": 0, "toolCalls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "x"}}]},
  {"step": 1, "text": "done"}]}`)
	code, stdout, stderr := runDshd(t, nil, "prompt", "--yes", "--json", "--model", "scripted:"+script, "--state-dir", t.TempDir(), "--cwd", t.TempDir(), "write it")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "? Create a.txt: allowed (--yes)\n") {
		t.Fatalf("stderr lacks the approved action:\n%s", stderr)
	}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if !strings.HasPrefix(line, "{") {
			t.Fatalf("stdout holds a line that is not JSON: %q", line)
		}
	}
}
