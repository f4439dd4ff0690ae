// This file builds a session's system prompt and keeps the one cache of
// project instructions (AGENTS.md) that sessions and spawned children use.

package session

import (
	"context"
	"errors"
	"fmt"
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
	extra := s.instructions.Get(cwd, s.log)
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

// maxInstructionDirs bounds an [InstructionsCache]; it is cleared when
// full.
const maxInstructionDirs = 256

// InstructionsCache keeps each directory's AGENTS.md section
// ([prompt.ProjectInstructions]) and reads the file again only when its
// size, modification time or type changes, so a turn does not pay a
// read. A file that cannot be used (a FIFO, a device, a link out of the
// directory, one that cannot be read) gives no section and is logged
// once for each version of it. The zero value is ready to use and safe
// for concurrent use.
type InstructionsCache struct {
	mu      sync.Mutex
	entries map[string]instructionsEntry
}

type instructionsEntry struct {
	version instructionsVersion
	text    string
}

// instructionsVersion is what a stat says of one version of AGENTS.md
// (or why the stat failed).
type instructionsVersion struct {
	size    int64
	modTime time.Time
	mode    fs.FileMode
	err     string
}

// Get returns cwd's AGENTS.md section, or "" when there is none or it
// cannot be used; log (nil: none) is told why it cannot.
func (c *InstructionsCache) Get(cwd string, log *slog.Logger) string {
	path := filepath.Join(cwd, prompt.ProjectInstructionsFile)
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	var v instructionsVersion
	if err != nil {
		v.err = err.Error()
	} else {
		v = instructionsVersion{size: st.Size(), modTime: st.ModTime(), mode: st.Mode()}
	}
	c.mu.Lock()
	e, ok := c.entries[cwd]
	c.mu.Unlock()
	if ok && e.version == v {
		return e.text
	}
	text := ""
	switch {
	case err != nil:
	case st.IsDir(): // not a mistake: no AGENTS.md
	case !st.Mode().IsRegular():
		// Not opened at all; the read refuses one swapped in since.
		err = fmt.Errorf("%s: %w", path, &smallfile.NotRegularError{Mode: st.Mode()})
	default:
		text, err = prompt.ProjectInstructions(cwd)
	}
	if err != nil && log != nil {
		log.Warn("project instructions not used", "err", err)
	}
	c.mu.Lock()
	if c.entries == nil || len(c.entries) >= maxInstructionDirs {
		c.entries = make(map[string]instructionsEntry)
	}
	c.entries[cwd] = instructionsEntry{version: v, text: text}
	c.mu.Unlock()
	return text
}
