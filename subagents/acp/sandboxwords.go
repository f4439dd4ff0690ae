// This file words what a child's sandbox did, for the message of a child
// that ended (at start, most often): the sandbox it ran in, the paths its
// stderr shows the sandbox refused, and the setting that would allow
// them, named where the agent was configured.

package acpprovider

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dshd/dshd/tools/sandbox"
)

// boxWords says where a confined child ran.
type boxWords struct {
	cmd *sandbox.Cmd
	box confinement
	// self is set for a child dshd, whose own state dir is made
	// writable when its settings (stateDir names them) name it.
	self     bool
	stateDir string
	// mode names the daemon's sandbox mode setting, which a child dshd
	// inherits.
	mode string
	// where is what the child may write in its sandbox.
	where string
}

// boxWordsOf describes the sandbox cmd runs t in, confined by box with
// the workspace roots.
func (p *Provider) boxWordsOf(t *target, box confinement, cmd *sandbox.Cmd, roots []string) *boxWords {
	cfg := p.configFor(box)
	var b strings.Builder
	dirs := cfg.WritableRoots
	if box.mode != sandbox.ReadOnly {
		dirs = slices.Concat(roots, dirs)
	}
	b.WriteString("only in ")
	for _, d := range dirs {
		b.WriteString("`" + d + "`, ")
	}
	b.WriteString("a private temp dir")
	if !cfg.NoCaches {
		b.WriteString(" and the toolchain caches")
	}
	if cfg.NoNetwork {
		b.WriteString(", with no network (loopback only)")
	}
	return &boxWords{cmd: cmd, box: box, self: t.self, stateDir: p.o.Settings.StateDirOf, mode: cfg.Settings.Mode, where: b.String()}
}

// in says, after how a confined child ended, that it ran in its sandbox;
// "" for one that ran unconfined (w nil).
func (w *boxWords) in() string {
	if w == nil {
		return ""
	}
	return " in its " + string(w.box.mode) + " sandbox"
}

// note says where the child could write in its sandbox and, when its
// stderr shows the sandbox refusing it something, what and the setting
// that would allow it; "" for a child that ran unconfined (w nil). Like
// the stderr tail, it is scrubbed.
func (w *boxWords) note(stderr string) string {
	if w == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("Its " + string(w.box.mode) + " sandbox")
	if w.box.inherited {
		b.WriteString(" (dshd's own " + w.mode + " mode, which a child dshd gets)")
	}
	b.WriteString(" lets it write " + w.where + ".")
	r := w.cmd.Refused(stderr)
	if len(r.Paths) > 0 {
		quoted := make([]string, len(r.Paths))
		for i, p := range r.Paths {
			quoted[i] = "`" + p + "`"
		}
		b.WriteString(" The sandbox refused " + strings.Join(quoted, ", ") + ": to let the agent write there, " + w.allowWrites() + ".")
	}
	if r.Network {
		b.WriteString(" It could not reach the network, which its sandbox takes away: to give it the network, " + w.allowNetwork() + ".")
	}
	return scrub(b.String())
}

// allowWrites names the settings that let the child write more, where the
// agent was configured.
func (w *boxWords) allowWrites() string {
	if w.box.entry != "" {
		return fmt.Sprintf(`add the directory to "%s" in its agents entry %q of the config file, or run it unconfined with "%s": "off" there`, KeyWritable, w.box.entry, KeySandbox)
	}
	s := "add the directory to " + KeyWritable + "= on its binding"
	if w.self {
		s += " (a child dshd's own state dir is made writable when its " + w.stateDir + " names it)"
	}
	return s + ", or run it unconfined with " + KeySandbox + "=off there"
}

// allowNetwork names the setting that gives the child the network.
func (w *boxWords) allowNetwork() string {
	if w.box.entry != "" {
		return fmt.Sprintf(`set "%s": true in its agents entry %q of the config file`, KeyNetwork, w.box.entry)
	}
	return "set " + KeyNetwork + "=true on its binding"
}
