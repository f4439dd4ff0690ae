package acpprovider

import (
	"bytes"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestResolveTarget_MergesTheNamedAgentWithTheBinding(t *testing.T) {
	p, err := New(&Options{
		Self:        "/usr/bin/dshd",
		DefaultArgs: []string{"serve", "--model", "m"},
		DefaultEnv:  []string{"FROM_DEFAULT=1"},
		Agents: map[string]AgentConfig{
			"codex": {Command: "codex-acp", Args: []string{"--x"}, Env: map[string]string{"A": "1"}, PassEnv: []string{"OPENAI_API_KEY"}, Unset: []string{"OPENAI_BASE_URL"}, Timeout: time.Minute},
			"far":   {Address: "tcp:10.0.0.5:7000", Token: "t0"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("the default is this program with the default arguments", func(t *testing.T) {
		tg, err := p.resolveTarget(nil)
		if err != nil || tg.command != "/usr/bin/dshd" || !slices.Equal(tg.args, []string{"serve", "--model", "m"}) || !slices.Equal(tg.setEnv, []string{"FROM_DEFAULT=1"}) || tg.startTimeout != DefaultStartTimeout {
			t.Fatalf("target = %+v, %v", tg, err)
		}
		// A socket daemon's own listener and token are not the child's.
		if !slices.Equal(tg.unsetEnv, []string{"DSHD_LISTEN", "DSHD_TOKEN"}) {
			t.Fatalf("unset = %q", tg.unsetEnv)
		}
	})
	t.Run("args alone replace the default arguments of this program", func(t *testing.T) {
		tg, err := p.resolveTarget(map[string]string{"args": "serve --model other"})
		if err != nil || tg.command != "/usr/bin/dshd" || !slices.Equal(tg.args, []string{"serve", "--model", "other"}) || len(tg.setEnv) != 0 {
			t.Fatalf("target = %+v, %v", tg, err)
		}
	})
	t.Run("a named agent with binding overrides", func(t *testing.T) {
		tg, err := p.resolveTarget(map[string]string{"agent": "codex", "env": "B=2 'C=x y'", "pass-env": "GH_TOKEN", "unset-env": "HOME", "timeout": "90s", "cwd": "/srv/work", "forward-mcp": ""})
		if err != nil {
			t.Fatal(err)
		}
		if tg.label != "codex" || tg.command != "codex-acp" || !slices.Equal(tg.args, []string{"--x"}) ||
			!slices.Equal(tg.setEnv, []string{"A=1", "B=2", "C=x y"}) || !slices.Equal(tg.unsetEnv, []string{"OPENAI_BASE_URL", "HOME"}) ||
			!slices.Equal(tg.passEnv, []string{"OPENAI_API_KEY", "GH_TOKEN"}) ||
			tg.timeout != 90*time.Second || tg.cwd != "/srv/work" || !tg.forwardMCP {
			t.Fatalf("target = %+v", tg)
		}
	})
	t.Run("a socket agent", func(t *testing.T) {
		tg, err := p.resolveTarget(map[string]string{"agent": "far", "start-timeout": "5"})
		if err != nil || tg.network != "tcp" || tg.address != "10.0.0.5:7000" || tg.token != "t0" || tg.startTimeout != 5*time.Second || tg.stdio() {
			t.Fatalf("target = %+v, %v", tg, err)
		}
	})
	t.Run("the named agent's lists are not shared with the target", func(t *testing.T) {
		tg, _ := p.resolveTarget(map[string]string{"agent": "codex", "unset-env": "X"})
		tg.unsetEnv[0] = "CHANGED"
		if p.o.Agents["codex"].Unset[0] != "OPENAI_BASE_URL" {
			t.Fatal("the configured agent was changed")
		}
	})
	for _, bad := range []map[string]string{
		{"env": "no-equals"},
		{"env": "1BAD=x"},
		{"unset-env": "A-B"},
		{"pass-env": "A-B"},
		{"pass-env": "'open"},
		{"forward-mcp": "maybe"},
		{"start-timeout": "-1"},
		{"address": "tcp:host"},
		{"address": "unix:"},
		{"token-env": "ACPPROVIDER_SURELY_UNSET_VARIABLE"},
	} {
		if _, err := p.resolveTarget(bad); err == nil {
			t.Errorf("resolveTarget(%v) did not fail", bad)
		}
	}
}

func TestEnviron_SetsAndUnsetsOverTheDaemonsEnvironment(t *testing.T) {
	t.Setenv("ACPPROVIDER_KEEP", "1")
	t.Setenv("ACPPROVIDER_DROP", "1")
	t.Setenv("ACPPROVIDER_OVER", "old")
	tg := &target{setEnv: []string{"ACPPROVIDER_OVER=new", "ACPPROVIDER_ADD=x"}, unsetEnv: []string{"ACPPROVIDER_DROP"}}
	env := tg.environ()
	has := func(kv string) bool { return slices.Contains(env, kv) }
	if !has("ACPPROVIDER_KEEP=1") || !has("ACPPROVIDER_OVER=new") || has("ACPPROVIDER_OVER=old") || !has("ACPPROVIDER_ADD=x") {
		t.Fatalf("env = %q", env)
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, "ACPPROVIDER_DROP=") {
			t.Fatalf("env keeps %s", kv)
		}
	}
}

// Mirrors dsh's buildChildEnv case "drops credential-shaped ambient vars
// but keeps the explicit extras", with dshd's unset-env and pass-env.
func TestEnviron_DropsCredentialShapedAmbientVarsButKeepsTheExplicitExtras(t *testing.T) {
	t.Setenv("ACPPROVIDER_TEST_SECRET_TOKEN", "leak-me")
	t.Setenv("ACPPROVIDER_PASSED_KEY", "passed")
	t.Setenv("ACPPROVIDER_PASSED_BUT_UNSET_KEY", "x")
	t.Setenv("ACPPROVIDER_SET_OVER_PASSED_TOKEN", "ambient")
	tg := &target{
		setEnv:   []string{"DEEPSEEK_API_KEY=explicit", "ACPPROVIDER_SET_OVER_PASSED_TOKEN=explicit"},
		passEnv:  []string{"ACPPROVIDER_PASSED_KEY", "ACPPROVIDER_PASSED_KEY", "ACPPROVIDER_PASSED_BUT_UNSET_KEY", "ACPPROVIDER_SET_OVER_PASSED_TOKEN", "ACPPROVIDER_NOT_SET_KEY"},
		unsetEnv: []string{"ACPPROVIDER_PASSED_BUT_UNSET_KEY"},
	}
	env := map[string][]string{}
	for _, kv := range tg.environ() {
		name, v, _ := strings.Cut(kv, "=")
		env[name] = append(env[name], v)
	}
	for name, want := range map[string][]string{
		"ACPPROVIDER_TEST_SECRET_TOKEN":     nil,
		"DEEPSEEK_API_KEY":                  {"explicit"},
		"ACPPROVIDER_PASSED_KEY":            {"passed"},
		"ACPPROVIDER_PASSED_BUT_UNSET_KEY":  nil,
		"ACPPROVIDER_SET_OVER_PASSED_TOKEN": {"explicit"},
		"ACPPROVIDER_NOT_SET_KEY":           nil,
		"PATH":                              {os.Getenv("PATH")},
	} {
		if !slices.Equal(env[name], want) {
			t.Errorf("%s = %q, want %q", name, env[name], want)
		}
	}
}

func TestLineCheck_FailsOnTheFirstLineThatIsNotAnObject(t *testing.T) {
	cases := []struct {
		name, in, sample string
		passed           string
	}{
		{"json lines pass", "{\"a\":1}\n  {\"b\":2}\r\n\n", "", "{\"a\":1}\n  {\"b\":2}\r\n\n"},
		{"a banner fails", "{\"a\":1}\nWelcome!\n{\"b\":2}\n", "Welcome!", "{\"a\":1}\n"},
		{"a raw newline inside a string starts a bad line", "{\"a\":\"x\ny\"}\n", "y\"}", "{\"a\":\"x\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := &lineCheck{r: strings.NewReader(tc.in)}
			got, err := io.ReadAll(l)
			if tc.sample == "" {
				if err != nil || string(got) != tc.in {
					t.Fatalf("read %q, %v", got, err)
				}
				return
			}
			if !errors.Is(err, errGarbage) || l.garbage() != tc.sample || string(got) != tc.passed {
				t.Fatalf("read %q, %v, sample %q", got, err, l.garbage())
			}
		})
	}
}

func TestScrub_HidesWhatLooksLikeASecret(t *testing.T) {
	key := "sk-proj-AbCdEf0123456789AbCdEf0123456789"
	for _, in := range []string{
		"error: invalid key " + key,
		"Authorization: Bearer abc.def.ghi",
		"DEEPSEEK_API_KEY=abcdef123",
		`{"token": "hunter2"}`,
	} {
		got := scrub(in)
		for _, secret := range []string{key, "abc.def.ghi", "abcdef123", "hunter2"} {
			if strings.Contains(got, secret) {
				t.Errorf("scrub(%q) = %q", in, got)
			}
		}
	}
	if got := scrub("the agent process exited with status 2"); got != "the agent process exited with status 2" {
		t.Fatalf("scrub changed a plain sentence: %q", got)
	}
}

func TestScrubTail_KeepsTheLastLinesWithinTheBound(t *testing.T) {
	var b bytes.Buffer
	for i := range 500 {
		b.WriteString("line ")
		b.WriteString(strings.Repeat("é", i%7))
		b.WriteString("\n")
	}
	b.WriteString("the last line\n")
	got := scrubTail(b.String(), 200)
	if len(got) > 200 || !strings.HasSuffix(got, "the last line") || !strings.HasPrefix(got, "line") {
		t.Fatalf("tail = %q", got)
	}
}

func TestTailBuffer_KeepsTheEnd(t *testing.T) {
	tb := tailBuffer{limit: 5}
	tb.Write([]byte("abc"))
	tb.Write([]byte("defg"))
	if tb.String() != "cdefg" || !tb.Truncated() {
		t.Fatalf("tail %q truncated %v", tb.String(), tb.Truncated())
	}
	tb.Write([]byte("0123456789"))
	if tb.String() != "56789" {
		t.Fatalf("tail %q", tb.String())
	}
}

func TestShellQuote_OneWord(t *testing.T) {
	for in, want := range map[string]string{"ls": "ls", "/usr/bin/x-y_z": "/usr/bin/x-y_z", "a b": "'a b'", "it's": `'it'\''s'`, "": "''"} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCheckOptions_RefusesAtStartWhatWouldFailWhenTheModelCallsTheTool(t *testing.T) {
	p, err := New(&Options{Self: "/usr/bin/dshd", Agents: map[string]AgentConfig{
		"codex":  {Command: "codex-acp"},
		"broken": {Address: "farm:7777"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		opts map[string]string
		want string // "" for no error
	}{
		{map[string]string{KeyAgent: "codex", KeyTimeout: "90s"}, ""},
		{map[string]string{KeyCommand: "x", KeyArgs: `serve "--a b"`}, ""},
		{map[string]string{KeyAgent: "codx"}, `no agent named "codx" is configured (configured: broken, codex); did you mean "codex"?`},
		{map[string]string{KeyAgent: "broken"}, `address "farm:7777": want unix:PATH, tcp:HOST:PORT or a ws://, wss://, http:// or https:// URL`},
		{map[string]string{"comand": "x"}, `did you mean "command"?`},
		{map[string]string{KeyArgs: "'serve"}, "args: unterminated ' quote"},
		{map[string]string{KeyAddress: "nowhere"}, `address "nowhere": want unix:PATH, tcp:HOST:PORT or a ws://, wss://, http:// or https:// URL`},
		{map[string]string{KeyTimeout: "abc"}, `timeout: "abc" is not a duration`},
		{map[string]string{KeyTimeout: "0"}, `timeout: "0": want more than zero`},
		{map[string]string{KeyStartTimeout: "0s"}, `start-timeout: "0s": want more than zero`},
		{map[string]string{KeyPassEnv: "OPENAI_API_KEY GH_TOKEN"}, ""},
		{map[string]string{KeyPassEnv: "A-B"}, `pass-env: "A-B" is not a variable name`},
	} {
		err := p.CheckOptions(tc.opts)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.opts, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: %v, want %q", tc.opts, err, tc.want)
		}
	}
	if !slices.Equal(p.OptionKeys(), optionKeys) {
		t.Errorf("OptionKeys = %v", p.OptionKeys())
	}
}
