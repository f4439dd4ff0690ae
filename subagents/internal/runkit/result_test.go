package runkit

import (
	"errors"
	"strings"
	"testing"

	"github.com/dshd/dshd/subagents"
)

func TestCut_KeepsWholeCharactersWithinTheBound(t *testing.T) {
	cases := []struct {
		name, in string
		n        int
		want     string
	}{
		{"a string within the bound is kept", "short", 10, "short"},
		{"a string at the bound is kept", "exact", 5, "exact"},
		{"ASCII is cut to the bound with an ellipsis", "abcdefghij", 7, "abcd…"},
		{"a two-byte character is never split", "ééééé", 6, "é…"},
		{"a bound too small for a character keeps the ellipsis only", "ééééé", 4, "…"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Cut(tc.in, tc.n); got != tc.want || len(got) > max(tc.n, len("…")) {
				t.Fatalf("Cut(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
			}
		})
	}
	if FirstLine("one\ntwo") != "one" || FirstLine("one") != "one" {
		t.Fatal("FirstLine")
	}
}

func TestScrub_HidesCredentialsAndKeepsWhatEachKindOfTextNeeds(t *testing.T) {
	key := "sk-proj-AbCdEf0123456789AbCdEf0123456789"
	cases := []struct {
		name    string
		in      string
		message string // ScrubMessage's answer
		output  string // ScrubOutput's answer
	}{
		{"a prefixed key is hidden by both", "invalid key " + key,
			"invalid key [redacted]", "invalid key [redacted]"},
		{"a bearer token is hidden by both", "Authorization: Bearer abc.def.ghi rejected",
			"[redacted] rejected", "[redacted] rejected"},
		{"a key=value pair is hidden by both, the whole key with it", " DEEPSEEK_API_KEY=abcdef123 ",
			"[redacted]", "[redacted]"},
		{"any key the secret-name rule holds for hides its value", "db_passphrase=hunter2 rejected",
			"[redacted] rejected", "[redacted] rejected"},
		{"a quoted JSON key is understood in output", `{"token": "hunter2"}`,
			`{"token": "hunter2"}`, `{"[redacted]"}`},
		{"a long base64 run with slashes is hidden in messages only", "blob abcdefghij/klmnopqrst/uvwxyz0123",
			"blob [redacted]", "blob abcdefghij/klmnopqrst/uvwxyz0123"},
		{"a plain sentence is kept", "the agent process exited with status 2",
			"the agent process exited with status 2", "the agent process exited with status 2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := ScrubMessage(tc.in); got != tc.message {
				t.Errorf("ScrubMessage(%q) = %q, want %q", tc.in, got, tc.message)
			}
			if got := ScrubOutput(tc.in); got != tc.output {
				t.Errorf("ScrubOutput(%q) = %q, want %q", tc.in, got, tc.output)
			}
		})
	}
}

func TestStructured_ValidatesTheAnswerAgainstTheSchema(t *testing.T) {
	schema, err := RequestSchema([]byte(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, answer, want string
		ok                 bool
	}{
		{"a bare answer is taken as it is", ` {"n": 1} `, `{"n": 1}`, true},
		{"a code fence around it is tolerated", "```json\n{\"n\": 2}\n```", `{"n": 2}`, true},
		{"an empty answer is refused", "  ", "", false},
		{"prose is refused", "n is 3", "", false},
		{"an answer the schema rejects is refused", `{"n": "three"}`, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Structured(schema, tc.answer)
			if (err == nil) != tc.ok || string(got) != tc.want {
				t.Fatalf("Structured = %q, %v", got, err)
			}
		})
	}
	if _, err := RequestSchema([]byte(`{`)); !errors.Is(err, subagents.ErrInvalidRequest) || !strings.Contains(err.Error(), "output schema") {
		t.Fatalf("a malformed schema: %v", err)
	}
	if schema, err := RequestSchema(nil); schema != nil || err != nil {
		t.Fatalf("no schema: %v, %v", schema, err)
	}
}

func TestIdleState_CarriesTheDiagnosticOfAFailureOnly(t *testing.T) {
	failed := IdleState(subagents.Result{StopReason: subagents.StopError, Diagnostic: "boom"})
	if failed.State != subagents.StateIdle || failed.Error != "boom" || failed.Usage == nil {
		t.Fatalf("failed = %+v", failed)
	}
	done := IdleState(subagents.Result{StopReason: subagents.StopCompleted, Diagnostic: "ignored"})
	if done.Error != "" || done.StopReason != subagents.StopCompleted {
		t.Fatalf("done = %+v", done)
	}
}
