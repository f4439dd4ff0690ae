// This file defines commands, the built-ins, reading command files and
// expanding a command's arguments.

package commands

import (
	"cmp"
	_ "embed"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dshd/dshd/internal/frontmatter"
	"github.com/dshd/dshd/internal/mdfiles"
	"github.com/dshd/dshd/internal/settingnames"
	"github.com/dshd/dshd/internal/shellwords"
	"github.com/dshd/dshd/internal/smallfile"
	"github.com/dshd/dshd/internal/suggest"
)

// Command is one slash command.
type Command struct {
	// Name is the command's name, without the slash.
	Name string
	// Description says what it does, for the editor's menu.
	Description string
	// ArgumentHint describes its arguments ("" when it takes none).
	ArgumentHint string
	// AllowedTools, when set, are the only tools the command's turn is
	// offered (dshd's names).
	AllowedTools []string
	// Model, when set, is the model the command's turn asks for.
	Model string
	// Body is the prompt template ($ARGUMENTS, $1…); "" for a built-in.
	Body string
	// File is the command file; "" for a built-in.
	File string

	// toolsAt is the allowed-tools key, where a mistake in it is told;
	// written maps a tool name that was mapped (a Claude Code name) to
	// the name as written.
	toolsAt frontmatter.Field
	written map[string]string
}

// Builtin reports whether c is one of dshd's own commands.
func (c Command) Builtin() bool { return c.File == "" }

// Names of the built-in commands.
const (
	Compact = "compact"
	Init    = "init"
	Agents  = "agents"
	Tasks   = "tasks"
)

// Builtins returns the built-in commands.
func Builtins() []Command {
	return []Command{
		{Name: Compact, Description: "Compact the conversation now: replace it with a summary, keeping what the work needs", ArgumentHint: "what the summary must keep (optional)"},
		{Name: Init, Description: "Write or update AGENTS.md, the project's instructions for agents, from the project itself"},
		{Name: Agents, Description: "List the agents this session can delegate to, with their tools"},
		{Name: Tasks, Description: "List this session's background tasks: commands and subagents, with their state"},
	}
}

// Expand returns c's prompt for the argument text args: $ARGUMENTS is
// args, $1 … $9 are its words (quoted with '…' or "…" to hold spaces;
// an absent word is ""). A body that uses neither gets the arguments
// appended on a line of their own, so they are never lost.
func (c Command) Expand(args string) string {
	args = strings.TrimSpace(args)
	words := shellwords.Fields(args)
	used := false
	var b strings.Builder
	body := c.Body
	for {
		i := strings.IndexByte(body, '$')
		if i < 0 || i == len(body)-1 {
			b.WriteString(body)
			break
		}
		b.WriteString(body[:i])
		rest := body[i+1:]
		switch {
		case strings.HasPrefix(rest, "ARGUMENTS"):
			b.WriteString(args)
			body, used = rest[len("ARGUMENTS"):], true
		case rest[0] >= '1' && rest[0] <= '9':
			n, _ := strconv.Atoi(rest[:1])
			if n <= len(words) {
				b.WriteString(words[n-1])
			}
			body, used = rest[1:], true
		default:
			b.WriteByte('$')
			body = rest
		}
	}
	out := b.String()
	if !used && args != "" {
		out = strings.TrimRight(out, "\n") + "\n\n" + args
	}
	return out
}

// Split reads "/name args" at the start of a prompt's text. ok is false
// for text that does not start with a slash and a name.
func Split(text string) (name, args string, ok bool) {
	rest, found := strings.CutPrefix(strings.TrimLeft(text, " \t"), "/")
	if !found {
		return "", "", false
	}
	end := strings.IndexFunc(rest, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' })
	if end < 0 {
		end = len(rest)
	}
	name = rest[:end]
	if !validName(name) {
		return "", "", false
	}
	return name, strings.TrimSpace(rest[end:]), true
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c == '-' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// Source is a directory of command files.
type Source struct {
	Dir string
	// User marks the user's own directory, which has a count of files of
	// its own ([Limits.MaxFiles]).
	User bool
	// Workspace is the directory a workspace's Dir is in, through which
	// (as an os.Root, internal/smallfile) its files are listed and read:
	// the repository is a peer, so a link that leads outside the
	// workspace is a mistake, and nothing outside is read. The user's
	// directory has none: the user's own files may link anywhere.
	Workspace string
}

// WorkspaceSources are the workspace's directories, first wins.
func WorkspaceSources(cwd string) []Source {
	return []Source{
		{Dir: filepath.Join(cwd, ".dshd", "commands"), Workspace: cwd},
		{Dir: filepath.Join(cwd, ".claude", "commands"), Workspace: cwd},
	}
}

// UserSources are the user's: $XDG_CONFIG_HOME/dshd/commands.
func UserSources(configHome string) []Source {
	if configHome == "" {
		return nil
	}
	return []Source{{Dir: filepath.Join(configHome, "dshd", "commands"), User: true}}
}

// DefaultMaxFileBytes is the largest command file read when [Limits] say
// nothing.
const DefaultMaxFileBytes = 256 << 10

// DefaultMaxFiles is how many command files are read from a workspace,
// and from the user's directory, when [Limits] say nothing: more than any
// collection of commands in use holds, and few enough that reading them
// all at DefaultMaxFileBytes each (128 MiB) and stat'ing them at each
// turn hurts no daemon.
const DefaultMaxFiles = 512

// Limits bound the command files read; the zero value is the defaults.
type Limits struct {
	// MaxFileBytes is the largest command file read (0:
	// [DefaultMaxFileBytes]); a larger one is a mistake, an [*Error]
	// naming the file and the setting: a prompt template is not a data
	// file.
	MaxFileBytes int64
	// MaxFiles is how many command files are read from a workspace's
	// directories together, .dshd/commands first, each by name, and
	// apart from them from the user's (0: [DefaultMaxFiles]): the user's
	// have a count of their own, which a repository cannot use up. The
	// files past it are neither stat'ed nor read, and each directory
	// holding some is a mistake, an [*Error] naming it, its count and the
	// setting.
	MaxFiles int
	// Settings names the limits where a hit is said.
	Settings Settings
}

// Settings are the names of the [Limits] in what is said of a hit
// (internal/settingnames): the daemon's flags.
type Settings struct {
	MaxFileBytes string
	MaxFiles     string
}

// filled is l with its defaults and names in place.
func (l Limits) filled() Limits {
	settingnames.Fill(&l.Settings)
	l.MaxFileBytes = cmp.Or(l.MaxFileBytes, DefaultMaxFileBytes)
	l.MaxFiles = cmp.Or(l.MaxFiles, DefaultMaxFiles)
	return l
}

// bound is how a command file is read within l, filled.
func (l Limits) bound() smallfile.Bound {
	return smallfile.Bound{Max: l.MaxFileBytes, What: "a command file", Setting: l.Settings.MaxFileBytes}
}

// count is how many command files are listed within l, filled, from the
// directories of a workspace or (user) from the user's.
func (l Limits) count(user bool) mdfiles.Count {
	where := "a workspace's .dshd/commands and .claude/commands together"
	if user {
		where = "the user's directory"
	}
	return mdfiles.Count{Max: l.MaxFiles, What: "command file", Where: where, Setting: l.Settings.MaxFiles}
}

// Error is a command file that cannot be used.
type Error struct {
	File string
	Err  error
}

func (e *Error) Error() string {
	var fe *frontmatter.Error
	if errors.As(e.Err, &fe) && fe.Line > 0 {
		return e.File + ":" + e.Err.Error() // FILE:LINE:COL: …
	}
	return e.File + ": " + e.Err.Error()
}
func (e *Error) Unwrap() error { return e.Err }

// Load reads the command files of sources within limits: the built-ins
// first, then each source's files by name; an earlier source wins a
// clash, and a file may not take a built-in's name.
func Load(sources []Source, limits Limits) ([]Command, []*Error) {
	limits = limits.filled()
	return list(sources, limits).load(limits.bound())
}

// listing is what the directories of some sources hold, within a count.
type listing struct {
	files []listed
	// errs are the directories that could not be read.
	errs []*Error
	// over are the directories that held more files than the count left
	// them.
	over []mdfiles.TooManyError
}

// listed is a command file as listed, with its source's workspace.
type listed struct {
	mdfiles.File
	workspace string
}

// list lists the command files of sources within limits, filled: a
// workspace's sources share one count, the user's have another.
func list(sources []Source, limits Limits) listing {
	workspace, user := limits.count(false).Quota(), limits.count(true).Quota()
	var out listing
	for _, src := range sources {
		q := workspace
		if src.User {
			q = user
		}
		files, over, err := q.List(src.Workspace, src.Dir)
		if err != nil {
			out.errs = append(out.errs, &Error{File: src.Dir, Err: err})
			continue
		}
		if over != nil {
			out.over = append(out.over, *over)
		}
		out.files = slices.Grow(out.files, len(files))
		for _, f := range files {
			out.files = append(out.files, listed{File: f, workspace: src.Workspace})
		}
	}
	return out
}

// stamps are the stamps of the files l found that could be stat'ed.
func (l listing) stamps() []mdfiles.Stamp {
	out := make([]mdfiles.Stamp, 0, len(l.files))
	for _, f := range l.files {
		if f.Err == nil {
			out = append(out, f.Stamp())
		}
	}
	return out
}

// load reads the files l found, each within bound: the built-ins first,
// then the files in l's order, an earlier one winning a clash. The
// mistakes are l's directories' first.
func (l listing) load(bound smallfile.Bound) ([]Command, []*Error) {
	cmds := Builtins()
	errs := slices.Clone(l.errs)
	for _, over := range l.over {
		errs = append(errs, &Error{File: over.Dir, Err: &over})
	}
	for _, f := range l.files {
		c, err := readFile(f, bound)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		i := slices.IndexFunc(cmds, func(have Command) bool { return have.Name == c.Name })
		switch {
		case i >= 0 && cmds[i].Builtin():
			errs = append(errs, &Error{File: f.Path, Err: fmt.Errorf("/%s is a built-in command; rename the file", c.Name)})
		case i < 0:
			cmds = append(cmds, c)
		}
	}
	return cmds, errs
}

// keys are the front matter keys a command file takes.
var keys = []string{"description", "argument-hint", "allowed-tools", "model"}

// readFile reads the command file f within bound: a workspace's through
// the workspace, so a link swapped in since the listing cannot lead out.
func readFile(f listed, bound smallfile.Bound) (Command, *Error) {
	path, err := f.Path, f.Err
	var data []byte
	switch {
	case err != nil:
	case !f.Info.Mode().IsRegular():
		// Not opened at all; the reader refuses one swapped in since.
		err = &smallfile.NotRegularError{Mode: f.Info.Mode()}
	default:
		data, err = smallfile.ReadBelow(f.workspace, path, bound)
	}
	if err != nil {
		return Command{}, &Error{File: path, Err: err}
	}
	c := Command{Name: strings.TrimSuffix(filepath.Base(path), ".md"), File: path}
	if !validName(c.Name) {
		return Command{}, &Error{File: path, Err: fmt.Errorf("%q is not a command name (letters, digits, '_', '-' or ':')", c.Name)}
	}
	doc, err := frontmatter.Parse(data)
	if err != nil && !errors.Is(err, frontmatter.ErrNoFrontMatter) {
		return Command{}, &Error{File: path, Err: err}
	}
	for _, f := range doc.Fields {
		var ferr error
		switch f.Key {
		case "description":
			c.Description, ferr = f.String()
		case "argument-hint":
			c.ArgumentHint, ferr = f.String()
		case "model":
			c.Model, ferr = f.String()
		case "allowed-tools":
			var names []string
			if names, ferr = f.List(); ferr == nil {
				c.AllowedTools, c.written = mapTools(names)
				c.toolsAt = f
			}
		default:
			ferr = f.Errorf("unknown key (a command file takes %s)%s", strings.Join(keys, ", "), suggest.DidYouMean(f.Key, keys))
		}
		if ferr != nil {
			return Command{}, &Error{File: path, Err: ferr}
		}
	}
	c.Body = strings.TrimSpace(doc.Body)
	if c.Description == "" {
		c.Description = firstLine(c.Body)
	}
	return c, nil
}

// claudeTools maps Claude Code's tool names onto dshd's; a permission
// pattern in parentheses (Bash(git add:*)) names the same tool.
var claudeTools = map[string]string{
	"Read": "read_file", "Write": "write_file", "Edit": "edit_file", "MultiEdit": "edit_file", "Bash": "run_command",
	"Grep": "grep", "Glob": "glob", "LS": "list_dir", "TodoWrite": "plan", "Task": "subagent", "Agent": "subagent",
}

// mapTools turns a file's tool names into dshd's, in every directory (the
// README promises Claude Code's names map in command files): a Claude
// Code name, with or without a permission pattern, means its counterpart;
// any other name is taken as written, and [Catalog.ToolErrors] tells of
// one that names no tool. written maps each name that was mapped to the
// name as the file wrote it.
func mapTools(names []string) (out []string, written map[string]string) {
	for _, n := range names {
		base, _, _ := strings.Cut(n, "(")
		if m, ok := claudeTools[base]; ok {
			if written == nil {
				written = map[string]string{}
			}
			if _, seen := written[m]; !seen {
				written[m] = n
			}
			n = m
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, written
}

// unknownTools returns a mistake for each tool c's allowed-tools names
// that is not in known, with the closest name (dshd's, or a Claude Code
// name that maps onto a known tool). c still runs with the named tools
// that exist: a mistake never widens a list meant to narrow.
func (c Command) unknownTools(known []string) []*Error {
	var out []*Error
	for _, n := range c.AllowedTools {
		if slices.Contains(known, n) {
			continue
		}
		what := fmt.Sprintf("%q", n)
		if w, ok := c.written[n]; ok {
			what = fmt.Sprintf("%q (%s)", n, w)
		}
		hint := suggest.DidYouMean(n, known)
		if hint == "" {
			var claude []string
			for name, m := range claudeTools {
				if slices.Contains(known, m) {
					claude = append(claude, name)
				}
			}
			slices.Sort(claude)
			if cl := suggest.Closest(n, claude); cl != "" {
				hint = fmt.Sprintf("; did you mean %q (%s)?", cl, claudeTools[cl])
			}
		}
		out = append(out, &Error{File: c.File, Err: c.toolsAt.Errorf("there is no tool named %s (the command runs with the other tools it names)%s", what, hint)})
	}
	return out
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	line = strings.TrimSpace(strings.TrimLeft(line, "# "))
	if r := []rune(line); len(r) > 100 {
		line = string(r[:100]) + "…"
	}
	return line
}

//go:embed init.md
var initPrompt string

// BuiltinPrompt is the prompt a built-in command sends to the model, with
// the user's words after it; ok is false for a built-in that is no prompt
// (/compact, /agents and /tasks act on the session instead).
func BuiltinPrompt(name, args string) (text string, ok bool) {
	if name != Init {
		return "", false
	}
	text = strings.TrimSpace(initPrompt)
	if args = strings.TrimSpace(args); args != "" {
		text += "\n\nAlso: " + args
	}
	return text, true
}
