// This file words the permission question of a command: the whole command,
// where it runs and in which sandbox, so nothing of it hides behind a
// first line.

package tools

import (
	"strconv"
	"strings"

	"github.com/dshd/dshd/internal/utf8cut"
)

// titleLimit bounds a command question's title; the content always shows
// the whole command.
const titleLimit = 200

// CommandQuestion is what a permission question about running cmd on
// runner shows.
type CommandQuestion struct {
	// Title is the command on one line: its lines joined with " ⏎ ", cut
	// with the number of lines when long.
	Title string
	// Content shows every line of the command, its working directory and
	// the sandbox it runs in.
	Content []Content
}

// AskCommand words the question of running cmd on runner. It returns the
// runner's error when the runner would refuse the command (a sandbox that
// cannot be had), so nobody is asked about a command that cannot run.
func AskCommand(runner Runner, cmd Command) (CommandQuestion, error) {
	line := cmd.Command
	if len(cmd.Args) > 0 {
		line = strings.Join(append([]string{cmd.Command}, cmd.Args...), " ")
	}
	sandbox := "the runner does not say whether it confines commands"
	if d, ok := runner.(SandboxDescriber); ok {
		var err error
		if sandbox, err = d.DescribeSandbox(cmd); err != nil {
			return CommandQuestion{}, err
		}
	}
	text := Fence(line, "sh") + "\n\nin `" + cmd.Dir + "`\n\n" + sandbox
	return CommandQuestion{Title: commandTitle(line), Content: []Content{TextContent(text)}}, nil
}

// commandTitle puts every line of s on one line, cut at titleLimit bytes
// with the count of lines when it does not fit.
func commandTitle(s string) string {
	s = strings.TrimSpace(s)
	lines := strings.Split(s, "\n")
	t := strings.Join(lines, " ⏎ ")
	if len(t) <= titleLimit {
		return t
	}
	suffix := "…"
	if len(lines) > 1 {
		suffix = "… (" + strconv.Itoa(len(lines)) + " lines)"
	}
	return utf8cut.Prefix(t, titleLimit) + suffix
}
