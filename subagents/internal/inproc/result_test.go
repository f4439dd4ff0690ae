package inproc

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dshd/dshd/agent/llm"
)

func TestDiagnose_ExplainsTheFailureWithoutAnythingPrivate(t *testing.T) {
	key := "sk-proj-AbCdEf0123456789AbCdEf0123456789"
	cases := []struct {
		name  string
		err   error
		want  string
		never []string
	}{
		{"a backend status is kept, its key-bearing message scrubbed",
			fmt.Errorf("agent: model call failed: %w", llm.NewAPIError(401, "invalid_api_key", "Incorrect API key provided: "+key+".", "body "+key, false, nil)),
			"the model backend failed: HTTP 401: Incorrect API key provided: [redacted]", []string{key, "body"}},
		{"a bearer token in a backend message is scrubbed",
			llm.NewAPIError(403, "", "Authorization: Bearer abc.def.ghi rejected", "", false, nil),
			"the model backend failed: HTTP 403", []string{"abc.def.ghi"}},
		{"a tool panic names the tool and never its panic value",
			errors.New("tool read_file panicked: contents of /home/u/.ssh/id_rsa: -----BEGIN"),
			"the tool read_file crashed", []string{"id_rsa", "BEGIN"}},
		{"a tool error names the tool and never its message",
			errors.New("agent: tool run_command: exec env AWS_SECRET=hunter2: broken pipe"),
			"the tool run_command failed", []string{"hunter2", "AWS_SECRET"}},
		{"a system prompt failure says so",
			errors.New("agent: system prompt: open /x: permission denied"), "the child's system prompt could not be built", []string{"/x"}},
		{"anything else keeps only a scrubbed first line",
			errors.New("something odd token=abc123\nsecond line with data"), "the child failed: something odd [redacted]", []string{"abc123", "second line"}},
		{"a truncated stream is a backend failure", llm.ErrTruncated, "the model backend failed: the response stream ended early", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := diagnose(tc.err)
			if !strings.HasPrefix(got, tc.want) {
				t.Fatalf("diagnose = %q, want prefix %q", got, tc.want)
			}
			for _, s := range tc.never {
				if strings.Contains(got, s) {
					t.Fatalf("diagnose = %q repeats %q", got, s)
				}
			}
			if len(got) > maxDiagnostic {
				t.Fatalf("diagnostic is %d bytes", len(got))
			}
		})
	}
	t.Run("a huge message is cut to the bound", func(t *testing.T) {
		got := diagnose(errors.New(strings.Repeat("word ", 10_000)))
		if len(got) > maxDiagnostic {
			t.Fatalf("diagnostic is %d bytes", len(got))
		}
	})
}

func TestCut_KeepsWholeCharacters(t *testing.T) {
	s := strings.Repeat("é", 10)
	for n := 3; n < len(s); n++ {
		got := cut(s, n)
		if len(got) > n || !strings.HasSuffix(got, "…") || strings.ContainsRune(got, '\uFFFD') {
			t.Fatalf("cut(%d) = %q", n, got)
		}
	}
	if cut("short", 10) != "short" {
		t.Fatal("cut changed a short string")
	}
}
