// End-to-end tests of command-line mistakes README's Configuration section
// calls exit 2 ("an unknown command or a missing argument is exit 2 too"):
// an unknown subcommand of dshd sessions, and the line naming the commands
// a setting belongs to.

package main

import (
	"strings"
	"testing"
)

func TestAnUnknownSessionsSubcommandIsExit2(t *testing.T) {
	runMistakes(t, []mistake{
		{name: "an unknown sessions subcommand", args: []string{"sessions", "lst"},
			want: []string{`unknown command "lst"`, "delete, list, show", `did you mean "list"?`}},
		{name: "a setting two other commands use", args: []string{"sessions", "list", "--model", "x"},
			want: []string{"--model", "dshd sessions list does not use this setting (dshd serve and dshd prompt do)"}},
	})
}

func TestTheUnknownCommandLineNamesOnlyTheCommandsHelpShows(t *testing.T) {
	code, _, stderr := runDshd(t, nil, "frob")
	if code != 2 {
		t.Fatalf("exit %d, want 2; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "prompt") || strings.Contains(stderr, "sandbox") {
		t.Fatalf("the line should list the commands of dshd --help and not the hidden sandbox helper:\n%s", stderr)
	}
}

func TestATokenFlagSaysWhereTheTokenGoes(t *testing.T) {
	runMistakes(t, []mistake{
		{name: "serve --token", args: []string{"serve", "--listen", "tcp:127.0.0.1:0", "--token", "0123456789abcdef0123"},
			want: []string{"--token: unknown flag", "never a flag", "DSHD_TOKEN or --token-file"}},
	})
}

func TestAnEmptyPromptIsExit2(t *testing.T) {
	// A missing argument is exit 2; so is one that says nothing, rather
	// than a model call for an empty turn.
	runMistakes(t, []mistake{
		{name: "an empty TEXT", args: []string{"prompt", ""},
			want: []string{"prompt: the prompt is empty"}},
		{name: "white space only", args: []string{"prompt", " \n\t"},
			want: []string{"prompt: the prompt is empty"}},
		{name: "an empty stdin", args: []string{"prompt", "-"},
			want: []string{"prompt: the prompt is empty", "- to read it from stdin"}},
	})
}

func TestAVersionFlagPointsAtTheVersionCommand(t *testing.T) {
	runMistakes(t, []mistake{
		{name: "dshd --version", args: []string{"serve", "--version"},
			want: []string{"--version: unknown flag", "dshd version"}},
	})
}
