package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestTable_EveryRowIsCompleteAndItsDefaultPassesItsOwnCheck(t *testing.T) {
	flags, keys := map[string]bool{}, map[string]bool{"agents": true}
	for _, s := range table {
		if s.flag == "" || s.file == "" || s.usage == "" || s.ptr == nil {
			t.Errorf("row %+v lacks a flag, file key, usage or field", s)
		}
		if flags[s.flag] || keys[s.file] {
			t.Errorf("flag --%s or key %q declared twice", s.flag, s.file)
		}
		flags[s.flag], keys[s.file] = true, true
		if s.def == "" || s.kind == kList {
			continue
		}
		v, err := parse(s.kind, s.def)
		if err != nil {
			t.Errorf("--%s: default %q does not parse: %v", s.flag, s.def, err)
			continue
		}
		check := s.check
		if check == nil {
			check = defaultCheck(s.kind)
		}
		if check != nil {
			if err := check(v); err != nil {
				t.Errorf("--%s: default %q fails its own check: %v", s.flag, s.def, err)
			}
		}
	}
}

// env is a lookup function over a map.
func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func load(t *testing.T, cmd Command, vars map[string]string, args ...string) (*Settings, error) {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	AddFlags(fs, cmd)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	if vars == nil {
		vars = map[string]string{}
	}
	return Load(fs, env(vars))
}

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoad_EachListItemAndNamedAgentKeepsItsOrigin(t *testing.T) {
	path := writeConfig(t, "{\n  \"subagents\": [\"a=spawn\",\n    \"b=fork\"],\n  \"agents\": {\"codex\": {\"command\": \"codex-acp\"}}\n}")
	st, err := load(t, Serve, nil, "--config", path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(st.Subagents, []string{"a=spawn", "b=fork"}) || st.Agents["codex"].Command != "codex-acp" {
		t.Fatalf("settings %+v", st)
	}
	for key, want := range map[string]string{
		"subagent[1]":  path + `:3:5: subagents[1] "b=fork": boom`,
		"agents.codex": path + ":4:14: agents.codex: boom",
		"mode":         `--mode (default) "ask": boom`,
	} {
		if got := st.Invalid(key, errors.New("boom")).Error(); got != want {
			t.Errorf("Invalid(%s) = %q, want %q", key, got, want)
		}
	}
	if !st.IsSet("subagent") || st.IsSet("mode") {
		t.Errorf("IsSet: subagent %v, mode %v", st.IsSet("subagent"), st.IsSet("mode"))
	}
}

func TestLoad_FlagBeatsEnvironmentBeatsFileBeatsDefault(t *testing.T) {
	path := writeConfig(t, `{"maxDepth": 1, "mode": "yolo", "logLevel": "warn"}`)
	st, err := load(t, Serve, map[string]string{"DSHD_MODE": "accept-edits", "DSHD_LOG_LEVEL": "error"}, "--config", path, "--log-level", "debug")
	if err != nil {
		t.Fatal(err)
	}
	if st.LogLevel != "debug" || st.Mode != "accept-edits" || st.MaxDepth != 1 || st.MaxTurnRequests != 100 {
		t.Fatalf("settings %+v", st)
	}
}

func TestLoad_AnEmptyVariableSetsNoNumberOrList(t *testing.T) {
	st, err := load(t, Serve, map[string]string{"DSHD_MAX_DEPTH": "", "DSHD_SUBAGENT": "", "DSHD_API_KEY_ENV": ""})
	if err != nil {
		t.Fatal(err)
	}
	if st.MaxDepth != 3 || st.Subagents != nil || !st.APIKeyEnvSet() || st.APIKeyEnv != "" {
		t.Fatalf("settings %+v", st)
	}
}

func TestLoad_ACommandReadsOnlyItsOwnSettings(t *testing.T) {
	path := writeConfig(t, `{"listen": "unix:/tmp/x.sock", "tokenFile": "/tmp/t"}`)
	st, err := load(t, Prompt, map[string]string{"DSHD_LISTEN": "nonsense"}, "--config", path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Listen != "" || st.TokenFile != "" {
		t.Fatalf("prompt read serve's settings: %+v", st)
	}
	if _, err := load(t, Serve, map[string]string{"DSHD_LISTEN": "nonsense"}, "--config", path); err == nil {
		t.Fatal("serve accepted a bad DSHD_LISTEN")
	}
}

func TestLoad_ADuplicateKeyNamesBothPlaces(t *testing.T) {
	path := writeConfig(t, "{\"mode\": \"ask\",\n \"mode\": \"yolo\"}")
	_, err := load(t, Serve, nil, "--config", path)
	if err == nil || err.Error() != path+`:2:2: mode: given twice (first at 1:2)` {
		t.Fatalf("err = %v", err)
	}
}

func TestLoad_AMissingDefaultFileIsNoMistakeButANamedOneIs(t *testing.T) {
	if _, err := load(t, Serve, map[string]string{"XDG_CONFIG_HOME": t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	_, err := load(t, Serve, map[string]string{"DSHD_CONFIG": "/nonexistent/c.json"})
	if err == nil || err.Error() != `env DSHD_CONFIG "/nonexistent/c.json": no such file or directory` {
		t.Fatalf("err = %v", err)
	}
}

// withRows runs f with extra rows in the table, as a helper adding a
// setting would.
func withRows(t *testing.T, rows []setting, f func()) {
	saved := table
	table = append(slices.Clone(table), rows...)
	t.Cleanup(func() { table = saved })
	f()
}

func TestLoad_SwitchesAndDurationsGetTheirKindsRulesForFree(t *testing.T) {
	var on bool
	var wait time.Duration
	rows := []setting{
		{flag: "test-switch", file: "testSwitch", usage: "u", kind: kBool, ptr: func(*Settings) any { return &on }},
		{flag: "test-wait", file: "testWait", usage: "u", kind: kDuration, def: "30s", ptr: func(*Settings) any { return &wait }},
	}
	withRows(t, rows, func() {
		if _, err := load(t, Serve, nil, "--test-switch"); err != nil || !on || wait != 30*time.Second {
			t.Fatalf("bare switch: %v, on %v, wait %v", err, on, wait)
		}
		if _, err := load(t, Serve, map[string]string{"DSHD_TEST_WAIT": "1.5"}); err != nil || wait != 1500*time.Millisecond {
			t.Fatalf("seconds: %v, wait %v", err, wait)
		}
		path := writeConfig(t, `{"testWait": "2m", "testSwitch": false}`)
		if _, err := load(t, Serve, nil, "--config", path); err != nil || wait != 2*time.Minute || on {
			t.Fatalf("file: %v, wait %v, on %v", err, wait, on)
		}
		for _, tc := range []struct {
			args []string
			vars map[string]string
			want string
		}{
			{[]string{"--test-wait", "0"}, nil, `--test-wait "0": want a duration above zero`},
			{[]string{"--test-wait", "-1s"}, nil, `--test-wait "-1s": want a duration above zero`},
			{[]string{"--test-wait", "soon"}, nil, `--test-wait "soon": want a duration like 90s or 2m, or a number of seconds`},
			{nil, map[string]string{"DSHD_TEST_SWITCH": "maybe"}, `env DSHD_TEST_SWITCH "maybe": want true or false`},
		} {
			_, err := load(t, Serve, tc.vars, tc.args...)
			if err == nil || err.Error() != tc.want {
				t.Errorf("%v %v: err = %v, want %s", tc.args, tc.vars, err, tc.want)
			}
		}
		path = writeConfig(t, `{"testSwitch": "yes"}`)
		if _, err := load(t, Serve, nil, "--config", path); err == nil || err.Error() != path+`:1:16: testSwitch "yes": want true or false` {
			t.Errorf("file switch: %v", err)
		}
	})
}

func TestFlagError_NamesTheCommandThatUsesASettingAndSuggestsAFlag(t *testing.T) {
	fs := pflag.NewFlagSet("prompt", pflag.ContinueOnError)
	fs.SetOutput(nopWriter{})
	AddFlags(fs, Prompt)
	for _, tc := range []struct{ args, want string }{
		{"--token-file=x", "--token-file: dshd prompt does not use this setting (dshd serve does)"},
		{"--max-dept=2", "--max-dept: unknown flag; did you mean --max-depth?"},
		{"--mode", "--mode: needs a value"},
		{"-q", "-q: unknown flag -q"},
	} {
		err := FlagError("dshd prompt", fs, fs.Parse(strings.Fields(tc.args)))
		var ce *Error
		if !errors.As(err, &ce) || err.Error() != tc.want {
			t.Errorf("%s: %v, want %s", tc.args, err, tc.want)
		}
	}
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }

// run_command's bounds are settings (audit finding 7: they were fixed in
// the code): bytes from 1024, timeouts in whole seconds, since the model
// gives and is told its timeouts in seconds.
func TestLoad_RunCommandsBoundsAreSettingsAndTheirTimeoutsAreWholeSeconds(t *testing.T) {
	st, err := load(t, Prompt, map[string]string{"DSHD_COMMAND_TIMEOUT": "5s"}, "--command-output-bytes", "2048", "--command-max-timeout", "1m")
	if err != nil || st.CommandOutputBytes != 2048 || st.CommandTimeout != 5*time.Second || st.CommandMaxTimeout != time.Minute {
		t.Fatalf("err %v, settings %d %v %v", err, st.CommandOutputBytes, st.CommandTimeout, st.CommandMaxTimeout)
	}
	for args, want := range map[string]string{
		"--command-timeout=500ms":     `--command-timeout "500ms": want 1s or more`,
		"--command-max-timeout=0":     `--command-max-timeout "0": want 1s or more`,
		"--command-output-bytes=1000": `--command-output-bytes "1000": want 1024 to 1073741824`,
	} {
		if _, err := load(t, Prompt, nil, args); err == nil || err.Error() != want {
			t.Errorf("%s: err = %v, want %s", args, err, want)
		}
	}
}
