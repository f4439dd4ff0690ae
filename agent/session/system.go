// This file builds a session's system prompt and keeps its project
// instructions (AGENTS.md), which its spawned children use too, with
// what its user is told of them.

package session

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/dshd/dshd/internal/smallfile"
	"github.com/dshd/dshd/prompt"
)

// SystemPrompt returns the session's system prompt source, which runs at
// the start of each turn: Config.System, or by default the embedded system
// template rendered for the session (its cwd, the agent's current model,
// today) followed by the project's AGENTS.md. A fork gives its child this
// very function, so the child sees the parent's prefix byte for byte.
func (s *Session) SystemPrompt() func(ctx context.Context) (string, error) { return s.system }

// defaultSystemPrompt renders the embedded system template for the
// session, then its project's AGENTS.md.
func (s *Session) defaultSystemPrompt(context.Context) (string, error) {
	tmpl, err := systemTemplate()
	if err != nil {
		return "", err
	}
	cwd := s.cfg.Cwd
	vars := prompt.SystemVars(cwd, s.agent.ModelID(), s.cfg.Now())
	extra := s.ProjectInstructions()
	if out, ok := s.lastSystem.get(vars, extra); ok {
		return out, nil
	}
	// A template override that forgot to register {{cwd}} still gets it.
	out, err := prompt.RenderWith(tmpl, vars, func(name string) (string, bool) {
		if name == prompt.VarCwd {
			return cwd, true
		}
		return "", false
	})
	if err != nil {
		return "", err
	}
	if extra != "" {
		out = strings.TrimRight(out, "\n") + "\n\n" + extra
	}
	s.lastSystem.set(vars, extra, out)
	return out, nil
}

// renderedSystem is the system prompt a session rendered last, with what
// it was rendered from. The template and the cwd do not change during a
// session, so while the variables (the model, the date) and AGENTS.md do
// not either, a turn takes it as it is instead of rendering it again. It is
// safe for concurrent use: a fork's child calls its parent's source.
type renderedSystem struct {
	mu    sync.Mutex
	vars  prompt.Vars
	extra string
	out   string
}

func (r *renderedSystem) get(vars prompt.Vars, extra string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.vars == nil || extra != r.extra || !maps.Equal(vars, r.vars) {
		return "", false
	}
	return r.out, true
}

func (r *renderedSystem) set(vars prompt.Vars, extra, out string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.vars, r.extra, r.out = vars, extra, out
}

// systemTemplate is the embedded system prompt template, read once.
var systemTemplate = sync.OnceValues(func() (string, error) { return prompt.Template(prompt.System) })

// compactTemplate is the embedded compaction instruction, read once ("" if
// it were missing: the agent then uses its own).
var compactTemplate = sync.OnceValue(func() string {
	t, _ := prompt.Template(prompt.Compaction)
	return t
})

// projectInstructions is a session's AGENTS.md section
// ([prompt.ProjectInstructions]), read again only when the file's size,
// modification time or type changes, so a turn does not pay a read. A
// file that cannot be used (a FIFO, a device, a link out of the
// directory, one that cannot be read) gives no section; that, and a file
// cut at its bound, is logged once for each version of the file and kept
// for the user, who is told once ([Session.InstructionsWarning]). The
// zero value is ready to use; it is safe for concurrent use (a spawned
// child reads its parent's).
type projectInstructions struct {
	mu      sync.Mutex
	read    bool                // a version was read
	version instructionsVersion // the version read
	section string
	// problem is what the user is told of the version read: why it is
	// not used, or that it was cut ("" Title: nothing); told says it was.
	problem InstructionsWarning
	told    bool
}

// instructionsVersion is what a stat says of one version of AGENTS.md
// (or why the stat failed, or that there is none).
type instructionsVersion struct {
	size    int64
	modTime time.Time
	mode    fs.FileMode
	err     string
	missing bool
}

// InstructionsWarning is what the user of a session is told of its
// AGENTS.md: that it is not used and why, or that it was cut at its bound.
type InstructionsWarning struct {
	// Title names the file and what became of it; Detail says why.
	Title, Detail string
}

// update brings c up to the file in cwd, read within limits, and returns
// the section; log is told of a new version that cannot be used or was
// cut. The caller holds c.mu.
func (c *projectInstructions) update(cwd string, limits prompt.InstructionsLimits, log *slog.Logger) string {
	path := filepath.Join(cwd, prompt.ProjectInstructionsFile)
	st, err := os.Stat(path)
	var v instructionsVersion
	switch {
	case errors.Is(err, fs.ErrNotExist):
		v.missing, err = true, nil
	case err != nil:
		v.err = err.Error()
	default:
		v = instructionsVersion{size: st.Size(), modTime: st.ModTime(), mode: st.Mode()}
	}
	if c.read && c.version == v {
		return c.section
	}
	c.read, c.version, c.section, c.problem, c.told = true, v, "", InstructionsWarning{}, false
	var cut string
	switch {
	case v.missing, err == nil && st.IsDir(): // not a mistake: no AGENTS.md
	case err != nil:
	case !st.Mode().IsRegular():
		// Not opened at all; the read refuses one swapped in since.
		err = &smallfile.NotRegularError{Mode: st.Mode()}
	default:
		var in prompt.Instructions
		in, err = prompt.ProjectInstructions(cwd, limits)
		c.section, cut = in.Section, in.Cut
	}
	if err != nil {
		// Why, without the path the stat's or the read's error wraps it
		// in: the file is named apart.
		why := err
		if u := errors.Unwrap(err); u != nil {
			why = u
		}
		log.Warn("project instructions not used", "file", path, "err", why)
		c.problem = InstructionsWarning{Title: path + " is not used", Detail: why.Error()}
	}
	if cut != "" {
		log.Warn("project instructions cut", "file", path, "setting", limits.Settings.MaxBytes, "reason", cut)
		c.problem = InstructionsWarning{Title: path + " is cut", Detail: cut}
	}
	return c.section
}

// ProjectInstructions returns the section of the session's AGENTS.md, read
// within Config.Instructions ([prompt.ProjectInstructions]): "" when there
// is none or it cannot be used. A spawned child's system prompt takes its
// parent's.
func (s *Session) ProjectInstructions() string {
	c := &s.instructions
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.update(s.cfg.Cwd, s.cfg.Instructions, s.log)
}

// InstructionsWarning returns what the session's user should be told of
// its AGENTS.md as the file is now: that it is not used and why, or that
// it was cut at its bound (--max-instructions-bytes, as
// Config.Instructions names it). Each version of the file is told once:
// ok is false when it was, when there is nothing to tell, and when the
// session's system prompt is not the default one (Config.System), which
// holds no AGENTS.md. The server asks at a session's setup and at the
// start of each turn.
func (s *Session) InstructionsWarning() (w InstructionsWarning, ok bool) {
	if s.cfg.System != nil {
		return InstructionsWarning{}, false
	}
	c := &s.instructions
	c.mu.Lock()
	defer c.mu.Unlock()
	c.update(s.cfg.Cwd, s.cfg.Instructions, s.log)
	if c.told || c.problem.Title == "" {
		return InstructionsWarning{}, false
	}
	c.told = true
	return c.problem, true
}
