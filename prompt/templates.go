// This file holds the embedded templates, the standard variables and the
// project instructions read from AGENTS.md.

package prompt

import (
	"cmp"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dshd/dshd/internal/settingnames"
	"github.com/dshd/dshd/internal/smallfile"
	"github.com/dshd/dshd/internal/utf8cut"
)

//go:embed templates/*.md
var templates embed.FS

// Names of the embedded templates, for [Template].
const (
	// System is the coding agent's system prompt. Variables: cwd, model,
	// date, os.
	System = "system"
	// Subagent is the system prompt of a spawned subagent child, which
	// works on a standalone task. Variables: cwd, model, date, os,
	// permissions.
	Subagent = "subagent"
	// Compaction asks the model to summarise the conversation so far so
	// the work can continue from the summary. Variables: none.
	Compaction = "compaction"
)

// Variable names the embedded templates use.
const (
	VarCwd   = "cwd"
	VarModel = "model"
	VarDate  = "date"
	VarOS    = "os"
	// VarPermissions is the subagent's paragraph about its permissions;
	// see [SubagentVars].
	VarPermissions = "permissions"
)

// ErrUnknownTemplate is returned by [Template] for a name it does not
// hold.
var ErrUnknownTemplate = errors.New("prompt: unknown template")

// Template returns the text of the embedded template name (see [System],
// [Subagent], [Compaction]), ready for [Render].
func Template(name string) (string, error) {
	if strings.ContainsAny(name, "/\\") {
		return "", fmt.Errorf("%w %q", ErrUnknownTemplate, name)
	}
	b, err := templates.ReadFile("templates/" + name + ".md")
	if err != nil {
		return "", fmt.Errorf("%w %q", ErrUnknownTemplate, name)
	}
	return string(b), nil
}

// Templates returns the names of the embedded templates, sorted.
func Templates() []string {
	entries, _ := fs.ReadDir(templates, "templates")
	var names []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".md"); ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// SystemVars returns the variables of the [System] template: cwd, model,
// date (now as YYYY-MM-DD in now's location) and os ("linux/amd64").
func SystemVars(cwd, model string, now time.Time) Vars {
	return Vars{
		VarCwd:   cwd,
		VarModel: model,
		VarDate:  now.Format(time.DateOnly),
		VarOS:    runtime.GOOS + "/" + runtime.GOARCH,
	}
}

// Paragraphs a subagent child is told about its permissions.
const (
	// FixedPermissionsNote is for a child whose permissions are fixed by
	// its parent: a refused action stays refused, so retrying only burns
	// the budget.
	FixedPermissionsNote = "# Permissions\n\nYour permissions were fixed by the agent that started you and cannot change while you run. If an action is refused or a path is outside your workspace, do not retry it or look for a way around it: report the limitation in your final message, say what you would have done, and finish the rest of the task."
	// AskPermissionsNote is for a child whose actions may still be put to
	// the user for approval.
	AskPermissionsNote = "# Permissions\n\nSome actions may need the user's approval. If one is rejected, do not retry it: adapt, or report the limitation in your final message."
)

// SubagentVars returns the variables of the [Subagent] template: those of
// [SystemVars] plus permissions, set to [FixedPermissionsNote] or
// [AskPermissionsNote].
func SubagentVars(cwd, model string, now time.Time, fixedPermissions bool) Vars {
	v := SystemVars(cwd, model, now)
	v[VarPermissions] = AskPermissionsNote
	if fixedPermissions {
		v[VarPermissions] = FixedPermissionsNote
	}
	return v
}

// ProjectInstructionsFile is the file [ProjectInstructions] reads.
const ProjectInstructionsFile = "AGENTS.md"

// DefaultMaxInstructionsBytes is how many bytes of AGENTS.md are used
// when [InstructionsLimits] say nothing.
const DefaultMaxInstructionsBytes = 64 << 10

// InstructionsLimits bound the project instructions; the zero value is
// the defaults.
type InstructionsLimits struct {
	// MaxBytes is how many bytes of AGENTS.md are used (0:
	// [DefaultMaxInstructionsBytes]), so that a huge file cannot crowd
	// the conversation out of the context window; the rest is cut, and the
	// cut is said.
	MaxBytes int64
	// Settings names the limits where a cut is said.
	Settings InstructionsSettings
}

// InstructionsSettings are the names of the [InstructionsLimits] in what
// is said of a cut (internal/settingnames): the daemon's flags.
type InstructionsSettings struct {
	MaxBytes string
}

// Instructions is a project's AGENTS.md as [ProjectInstructions] found
// it.
type Instructions struct {
	// Section is the text to append to the system prompt; "" when there
	// is none.
	Section string
	// Cut is set when the file is longer than the bound and only its
	// start is in Section: what the user is told of it, naming the bound's
	// setting. The model is told in Section.
	Cut string
}

// ProjectInstructions reads AGENTS.md in cwd and returns it as a section
// to append to the rendered system prompt (never to render: it is the
// project's text, not a template). A missing file, or a directory of
// that name, gives no section. The file is read through cwd as an
// os.Root: a symlink may lead to another file below cwd, but one that
// leads outside it (even if swapped in during the read) is an error and
// nothing of it is read, as read_file refuses the same path. A FIFO or a
// device is an error too, found without waiting for it or reading it
// (internal/smallfile). An error names the file and wraps why it cannot
// be used. Content beyond limits.MaxBytes is cut at a character boundary
// and the cut is said, to the model in the section and to the user in
// Cut.
func ProjectInstructions(cwd string, limits InstructionsLimits) (Instructions, error) {
	settingnames.Fill(&limits.Settings)
	bound := smallfile.Bound{Max: cmp.Or(limits.MaxBytes, DefaultMaxInstructionsBytes), What: ProjectInstructionsFile, Setting: limits.Settings.MaxBytes}
	path := filepath.Join(cwd, ProjectInstructionsFile)
	root, err := smallfile.OpenRoot(cwd)
	if err != nil {
		return missingOrError(path, err)
	}
	defer root.Close()
	b, err := root.Read(path, bound)
	var tooLarge *smallfile.TooLargeError
	var notRegular *smallfile.NotRegularError
	switch {
	case errors.As(err, &notRegular) && notRegular.Mode.IsDir():
		return Instructions{}, nil
	case errors.As(err, &tooLarge):
		b = utf8cut.Prefix(b, int(bound.Max))
	case err != nil:
		return missingOrError(path, err)
	}
	text := strings.TrimSpace(strings.ToValidUTF8(string(b), "\uFFFD"))
	if text == "" {
		return Instructions{}, nil
	}
	var s strings.Builder
	s.WriteString("# Project instructions\n\nThe project's ")
	s.WriteString(ProjectInstructionsFile)
	s.WriteString(" (")
	s.WriteString(path)
	s.WriteString(") says the following. Follow it unless the user says otherwise.\n\n")
	s.WriteString(text)
	s.WriteString("\n")
	var cut string
	if tooLarge != nil {
		fmt.Fprintf(&s, "\n[%s was cut after %d bytes; read the file for the rest.]\n", ProjectInstructionsFile, len(b))
		size := "more than " + strconv.FormatInt(bound.Max, 10)
		if tooLarge.Size > bound.Max {
			size = strconv.FormatInt(tooLarge.Size, 10)
		}
		cut = fmt.Sprintf("it is %s bytes, over %s (%d); the model is given its first %d bytes and told the rest is in the file", size, bound.Setting, bound.Max, len(b))
	}
	return Instructions{Section: s.String(), Cut: cut}, nil
}

// missingOrError is what ProjectInstructions returns when cwd or the file
// at path cannot be read: no section when either does not exist, the
// error naming the file otherwise.
func missingOrError(path string, err error) (Instructions, error) {
	if errors.Is(err, fs.ErrNotExist) {
		return Instructions{}, nil
	}
	// The os package names what it opened, relative to the root for the
	// file; the full path says more.
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return Instructions{}, fmt.Errorf("prompt: project instructions %s: %w", path, err)
}
