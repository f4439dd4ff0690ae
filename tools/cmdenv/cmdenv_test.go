package cmdenv

import (
	"slices"
	"strings"
	"testing"
)

var environ = []string{
	"PATH=/usr/bin",
	"HOME=/home/u",
	"LANG=C.UTF-8",
	"DSHD_TOKEN=tok-0123456789abcdef",
	"DEEPSEEK_API_KEY=sk-secret-value",
	"GITHUB_TOKEN=ghp_x",
	"aws_secret_access_key=lower",
	"MY_COPY=sk-secret-value",
	"GOFLAGS=-mod=mod",
	"CI_JOB=7",
	"EDITOR=vi",
	"PGPASSWORD=pw",
	"SSH_AUTH_SOCK=/tmp/agent.sock",
}

func names(env []string) []string {
	var out []string
	for _, kv := range env {
		n, _, _ := strings.Cut(kv, "=")
		out = append(out, n)
	}
	return out
}

func TestApply(t *testing.T) {
	secrets := func(p Policy) Policy {
		p.Secrets = []string{"DSHD_TOKEN", "DEEPSEEK_API_KEY"}
		p.SecretValues = []string{"tok-0123456789abcdef", "sk-secret-value", ""}
		return p
	}
	cases := []struct {
		name string
		p    Policy
		want []string
	}{
		{"the zero policy drops names that look like secrets", Policy{},
			[]string{"PATH", "HOME", "LANG", "MY_COPY", "GOFLAGS", "CI_JOB", "EDITOR", "SSH_AUTH_SOCK"}},
		{"dshd's secrets go by name and by value, even with the default excludes off", secrets(Policy{KeepSecretNames: true}),
			[]string{"PATH", "HOME", "LANG", "GITHUB_TOKEN", "aws_secret_access_key", "GOFLAGS", "CI_JOB", "EDITOR", "PGPASSWORD", "SSH_AUTH_SOCK"}},
		{"core keeps what programs need", secrets(Policy{Inherit: InheritCore}),
			[]string{"PATH", "HOME", "LANG"}},
		{"none passes only Set entries", secrets(Policy{Inherit: InheritNone, Set: []string{"A=1"}}),
			[]string{"A"}},
		{"exclude globs ignore case", secrets(Policy{Exclude: []string{"ci_*", "EDIT?R"}}),
			[]string{"PATH", "HOME", "LANG", "GOFLAGS", "SSH_AUTH_SOCK"}},
		{"include-only keeps the matching names, Set entries included", secrets(Policy{IncludeOnly: []string{"PATH", "go*", "X"}, Set: []string{"X=1", "Y=2"}}),
			[]string{"PATH", "GOFLAGS", "X"}},
		{"a Set entry cannot bring a secret back", secrets(Policy{Set: []string{"DSHD_TOKEN=again", "OTHER=sk-secret-value", "EDITOR=nano"}}),
			[]string{"PATH", "HOME", "LANG", "GOFLAGS", "CI_JOB", "EDITOR", "SSH_AUTH_SOCK"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.p.Validate(); err != nil {
				t.Fatal(err)
			}
			got := tc.p.Apply(environ)
			if !slices.Equal(names(got), tc.want) {
				t.Fatalf("got %v, want %v", names(got), tc.want)
			}
		})
	}
}

func TestApply_SetReplacesAndTheLastDuplicateWins(t *testing.T) {
	p := Policy{Set: []string{"EDITOR=nano"}}
	got := p.Apply([]string{"X=1", "EDITOR=vi", "X=2", "junk", "=empty"})
	if want := []string{"X=2", "EDITOR=nano"}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestValidate_RejectsBadPatternsAndEntries(t *testing.T) {
	for _, p := range []Policy{
		{Inherit: "some"},
		{Exclude: []string{"[a"}},
		{IncludeOnly: []string{"\\"}},
		{Set: []string{"NOVALUE"}},
		{Set: []string{"=v"}},
	} {
		if err := p.Validate(); err == nil {
			t.Errorf("%+v validated", p)
		}
	}
}
