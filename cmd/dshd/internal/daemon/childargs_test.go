package daemon

import (
	"fmt"
	"slices"
	"testing"

	"github.com/spf13/pflag"

	"github.com/dshd/dshd/cmd/dshd/internal/config"
)

// settingsOf loads a daemon's settings from args and the environment env
// holds, and nothing else.
func settingsOf(t *testing.T, args []string, env ...string) *config.Settings {
	t.Helper()
	fs := pflag.NewFlagSet("dshd", pflag.ContinueOnError)
	config.AddFlags(fs, config.Serve)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("the arguments %q: %v", args, err)
	}
	st, err := config.Load(fs, func(name string) (string, bool) {
		for i := 0; i+1 < len(env); i += 2 {
			if env[i] == name {
				return env[i+1], true
			}
		}
		return "", false
	})
	if err != nil {
		t.Fatalf("the settings from %q: %v", args, err)
	}
	return st
}

// bare is the settings of a parent that has none of a daemon's own
// (dshd prompt's), with the disk bounds given.
func bare(journal, free, state int) *config.Settings {
	return &config.Settings{LogLevel: "info", LogFormat: "text", Sandbox: "off", SandboxFallback: "refuse", MCPSandbox: "off",
		MaxJournalBytes: journal, MinFreeDiskBytes: free, MaxStateBytes: state}
}

// TestAChildDshdSharesItsParentsSettings: the arguments of the default
// child dshd carry what the parent was given of the settings a child
// shares with it, and the child's settings read them back; a parent that
// left one at its default leaves the child the same default.
func TestAChildDshdSharesItsParentsSettings(t *testing.T) {
	for _, tc := range []struct {
		name   string
		parent *config.Settings
		of     func(*config.Settings) any
		// want is the child's values; nil: the parent's own.
		want any
		// absent is a flag the child's arguments must not hold.
		absent string
	}{
		// The files of a workspace it reads itself: their sizes and how many.
		{name: "workspace file bounds", parent: settingsOf(t, []string{"--max-instructions-bytes", "2048", "--max-command-file-bytes", "3072",
			"--max-agent-file-bytes", "4096", "--max-ignore-file-bytes", "5120", "--max-command-files", "7", "--max-agent-files", "3"}),
			of: workspaceFiles, want: [6]int{2048, 3072, 4096, 5120, 7, 3}},
		{name: "default workspace file bounds", parent: settingsOf(t, nil), of: workspaceFiles},
		// A child given a binding's repo= clones it itself.
		{name: "checkout timeout", parent: settingsOf(t, []string{"--checkout-timeout", "90s"}), of: checkoutTimeout, want: "1m30s"},
		{name: "default checkout timeout", parent: settingsOf(t, nil), of: checkoutTimeout, want: "5m0s"},
		{name: "model answer bound", parent: settingsOf(t, []string{"--max-model-answer-bytes", "1048576"}), of: modelAnswer, want: 1048576},
		{name: "default model answer bound", parent: settingsOf(t, nil), of: modelAnswer, absent: "--max-model-answer-bytes"},
		// A session gives its child its additional directories.
		{name: "additional directories", parent: settingsOf(t, []string{"--max-additional-directories", "200"}), of: addDirs, want: 200},
		{name: "default additional directories", parent: settingsOf(t, nil), of: addDirs, want: 64},
		{name: "a parent without the setting", parent: bare(0, 0, 0), of: addDirs, want: 64},
		// 0, off, included: a child keeps no bound its parent turned off.
		{name: "disk bounds", parent: bare(4096, 1<<30, 768<<20), of: disk, want: [3]int{4096, 1 << 30, 768 << 20}},
		{name: "disk bounds off", parent: bare(0, 0, 0), of: disk, want: [3]int{0, 0, 0}},
		{name: "run_command's bounds", parent: settingsOf(t, []string{"--command-output-bytes", "5000", "--command-timeout", "30s", "--command-max-timeout", "1h"}),
			of: commandBounds, want: "5000 30s 1h0m0s"},
		{name: "default run_command's bounds", parent: settingsOf(t, nil), of: commandBounds, want: "30000 2m0s 10m0s"},
		{name: "background tasks", parent: settingsOf(t, []string{"--max-tasks", "4", "--max-kept-tasks", "9", "--task-output-limit", "65536"}),
			of: taskBounds, want: [3]int{4, 9, 65536}},
		{name: "default background tasks", parent: settingsOf(t, nil), of: taskBounds},
		{name: "commands' environment", parent: settingsOf(t, []string{"--command-env", "core", "--command-env-exclude", "AWS_*", "--command-env-include-only", "PATH",
			"--command-env-include-only", "GO*", "--command-env-set", "A=1", "--command-env-set", "B=2", "--command-env-keep-secret-names"}),
			of: envPolicy, want: "core [AWS_*] [PATH GO*] [A=1 B=2] true"},
		{name: "default commands' environment", parent: settingsOf(t, nil), of: envPolicy, want: "all [] [] [] false"},
		// The child inherits the variable; its value stays out of the
		// child's arguments.
		{name: "values set from the environment", parent: settingsOf(t, nil, "DSHD_COMMAND_ENV_SET", "SECRET=hunter2"),
			of: envPolicy, want: "all [] [] [] false", absent: "--command-env-set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := childArgs(tc.parent)
			child := settingsOf(t, args[1:])
			want := tc.want
			if want == nil {
				want = tc.of(tc.parent)
			}
			if got := tc.of(child); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("the child of a parent with %v has %v, want %v (arguments %q)", tc.of(tc.parent), got, want, args)
			}
			if tc.absent != "" && slices.Contains(args, tc.absent) {
				t.Fatalf("the child's arguments hold %s, which its parent was not given: %q", tc.absent, args)
			}
		})
	}
}

func workspaceFiles(s *config.Settings) any {
	return [6]int{s.MaxInstructionsBytes, s.MaxCommandFileBytes, s.MaxAgentFileBytes, s.MaxIgnoreFileBytes, s.MaxCommandFiles, s.MaxAgentFiles}
}

func checkoutTimeout(s *config.Settings) any { return s.CheckoutTimeout }

func modelAnswer(s *config.Settings) any { return s.MaxModelAnswerBytes }

func addDirs(s *config.Settings) any { return s.MaxAdditionalDirectories }

func disk(s *config.Settings) any {
	return [3]int{s.MaxJournalBytes, s.MinFreeDiskBytes, s.MaxStateBytes}
}

func commandBounds(s *config.Settings) any {
	return fmt.Sprint(s.CommandOutputBytes, " ", s.CommandTimeout, " ", s.CommandMaxTimeout)
}

func taskBounds(s *config.Settings) any { return [3]int{s.MaxTasks, s.MaxKeptTasks, s.TaskOutput} }

func envPolicy(s *config.Settings) any {
	return fmt.Sprint(s.CommandEnv, " ", s.CommandEnvDrop, " ", s.CommandEnvOnly, " ", s.CommandEnvSet, " ", s.CommandEnvSecret)
}
