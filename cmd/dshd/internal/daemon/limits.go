// limits.go: the settings that bound each connection, as acp/rpc takes
// them, and the files of a workspace dshd reads itself, as their readers
// take them.

package daemon

import (
	"time"

	"github.com/dshd/dshd/acp/rpc"
	"github.com/dshd/dshd/cmd/dshd/internal/config"
	"github.com/dshd/dshd/prompt"
	"github.com/dshd/dshd/prompt/commands"
	"github.com/dshd/dshd/tools/builtin"
	"github.com/dshd/dshd/tools/search"
)

// connLimits maps the limit settings onto rpc.Limits, where a negative
// duration disables a timer (a setting of 0 means never). The idle
// timeout applies to socket connections only: a stdio connection is the
// editor's own process, idle for as long as its user is.
func connLimits(st *config.Settings) rpc.Limits {
	never := func(d time.Duration) time.Duration {
		if d <= 0 {
			return -1
		}
		return d
	}
	l := rpc.Limits{
		MaxLineSize:        st.MaxLineBytes,
		PreAuthMaxLineSize: st.PreauthMaxLineBytes,
		HandshakeTimeout:   never(st.HandshakeTimeout),
		MaxQueuedInput:     st.MaxQueuedInputBytes,
		MaxQueuedOutput:    st.MaxQueuedOutputBytes,
		WriteTimeout:       never(st.WriteTimeout),
		MaxAuthFailures:    st.MaxAuthFailures,
		// The logs of a hit name the flag, as README spells it.
		Settings: rpc.Settings{
			MaxLineSize:        "--max-line-bytes",
			PreAuthMaxLineSize: "--preauth-max-line-bytes",
			HandshakeTimeout:   "--handshake-timeout",
			MaxQueuedInput:     "--max-queued-input-bytes",
			MaxQueuedOutput:    "--max-queued-output-bytes",
			WriteTimeout:       "--write-timeout",
			IdleTimeout:        "--idle-timeout",
			MaxAuthFailures:    "--max-auth-failures",
		},
	}
	if st.Listen != "" {
		l.IdleTimeout = never(st.IdleTimeout)
	}
	return l
}

// The bounds of the files a workspace holds that dshd reads itself, each
// named by its flag where a hit is logged or told.

func instructionsLimits(st *config.Settings) prompt.InstructionsLimits {
	return prompt.InstructionsLimits{MaxBytes: int64(st.MaxInstructionsBytes), Settings: prompt.InstructionsSettings{MaxBytes: "--max-instructions-bytes"}}
}

func commandLimits(st *config.Settings) commands.Limits {
	return commands.Limits{MaxFileBytes: int64(st.MaxCommandFileBytes), MaxFiles: st.MaxCommandFiles,
		Settings: commands.Settings{MaxFileBytes: "--max-command-file-bytes", MaxFiles: "--max-command-files"}}
}

// builtinOptions bound the ignore files glob and grep read, and
// run_command's output and timeouts.
func builtinOptions(st *config.Settings) *builtin.BuiltinOptions {
	walk := search.Limits{MaxIgnoreFileBytes: int64(st.MaxIgnoreFileBytes), Settings: search.Settings{MaxIgnoreFileBytes: "--max-ignore-file-bytes"}}
	run := &builtin.RunCommandOptions{OutputLimit: st.CommandOutputBytes, DefaultTimeout: st.CommandTimeout, MaxTimeout: st.CommandMaxTimeout,
		Settings: builtin.RunCommandSettings{OutputLimit: "--command-output-bytes"}}
	return &builtin.BuiltinOptions{Glob: &builtin.GlobOptions{Walk: walk}, Grep: &builtin.GrepOptions{Walk: walk}, RunCommand: run}
}
