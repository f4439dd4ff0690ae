// End-to-end test of `dshd prompt --json` when the turn fails: the last
// line is {"error": …, "code": …} with the same words the text mode
// prints, not the Go error's text with the JSON-RPC data repeated in it.

package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestPromptJSONEndsAFailedTurnWithTheErrorsWordsAndCode(t *testing.T) {
	script := writeScript(t, `{"rules": [{"error": "boom"}]}`)
	code, stdout, stderr := runDshd(t, nil, "prompt", "--json", "--model", "scripted:"+script, "--state-dir", t.TempDir(), "--cwd", t.TempDir(), "hi")
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	var last struct {
		Error string `json:"error"`
		Code  int    `json:"code"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
		t.Fatalf("last line %q: %v", lines[len(lines)-1], err)
	}
	if last.Code != -32603 || !strings.HasPrefix(last.Error, "The turn failed: ") || !strings.HasSuffix(last.Error, "boom") {
		t.Fatalf("last line %q, want the code -32603 and the words of the text mode", lines[len(lines)-1])
	}
	if !strings.Contains(stderr, "dshd: "+last.Error+"\n") {
		t.Fatalf("stderr lacks the same words %q:\n%s", last.Error, stderr)
	}
}
