// This file defines a definition, its errors, and Parse: one file's front
// matter and body turned into a binding, before any provider is asked.

package definition

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/dshd/dshd/internal/frontmatter"
	"github.com/dshd/dshd/internal/mdfiles"
	"github.com/dshd/dshd/internal/shellwords"
	"github.com/dshd/dshd/internal/smallfile"
	"github.com/dshd/dshd/internal/suggest"
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/tools"
	"github.com/dshd/dshd/tools/subagent"
)

// Dialect says how a file's keys and tool names are read.
type Dialect int

const (
	// DSHD is dshd's own format: dshd's tool names and keys.
	DSHD Dialect = iota
	// ClaudeCode is Claude Code's agent format: its tool names (Read,
	// Bash, …) map onto dshd's, and its permissionMode is understood.
	ClaudeCode
)

// Scope is where a definition was read from.
type Scope string

const (
	ScopeWorkspace Scope = "workspace"
	ScopeUser      Scope = "user"
)

// Definition is one agent definition as read from its file.
type Definition struct {
	// File is the file's path.
	File    string
	Scope   Scope
	Dialect Dialect
	// Binding is the subagent tool the definition defines: its name,
	// description, provider and options.
	Binding subagent.Binding

	// lines are the positions of the keys that were given, for errors
	// found after parsing; bodyLine is where the system prompt starts.
	lines    map[string][2]int
	bodyLine int
	// modelGiven is the model named in the file ("" for inherit).
	modelGiven string
	// schemaStamp is the stamp of the schema file outputSchema names,
	// taken before it was read (Path "" when it names none), through
	// schemaRoot, the workspace of a workspace definition ("" for the
	// user's); schemaBound is how that file is read.
	schemaStamp mdfiles.Stamp
	schemaRoot  string
	schemaBound smallfile.Bound
}

// Name returns the tool name.
func (d *Definition) Name() string { return d.Binding.ToolName }

// Error is a definition that cannot work.
type Error struct {
	// File is the definition's path; Line and Column the key's position
	// (0 when the mistake is the file's as a whole).
	File         string
	Line, Column int
	// Key is the front matter key that is wrong ("body" for the system
	// prompt, "" for the file as a whole).
	Key string
	// Provider and Capability are set when the provider lacks the
	// start-time capability the key needs.
	Provider, Capability string
	Err                  error

	scope Scope // whose mistake it is: the workspace's or the user's
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Column)
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Front matter keys of dshd's format.
const (
	keyName            = "name"
	keyDescription     = "description"
	keyProvider        = "provider"
	keyAgent           = "agent"
	keyCommand         = "command"
	keyArgs            = "args"
	keySandbox         = "sandbox"
	keyWritable        = "writable"
	keyNetwork         = "network"
	keyTools           = "tools"
	keyDisallowedTools = "disallowedTools"
	keyModel           = "model"
	keyOutputSchema    = "outputSchema"
	keyMaxDepth        = "maxDepth"
	keyMaxTurns        = "maxTurns"
	keyMaxTokens       = "maxTokens"
	keyPermissions     = "permissions"
	keyBackground      = "background"
	keyBody            = "body"

	// Claude Code's keys that dshd reads.
	keyPermissionMode = "permissionMode"
	keyColor          = "color"
)

// dshdKeys are the keys of dshd's format, in the order messages list them.
var dshdKeys = []string{keyName, keyDescription, keyProvider, keyAgent, keyCommand, keyArgs, keySandbox, keyWritable, keyNetwork, keyTools, keyDisallowedTools,
	keyModel, keyOutputSchema, keyMaxDepth, keyMaxTurns, keyMaxTokens, keyPermissions, keyBackground}

// Inherit is the model (and permissions) value that takes the parent's.
const Inherit = "inherit"

// Parse reads one definition file. It checks what the file alone decides
// (its keys, their types, the tool names of its dialect); [Check] holds it
// to the providers and tools that exist. A workspace definition's
// workspace, which its agent may write, is the directory its
// .dshd/agents (or .claude/agents) is in. A schema file it names is read
// within [DefaultMaxFileBytes].
func Parse(file string, data []byte, dialect Dialect, scope Scope) (*Definition, error) {
	d := newDefinition(file, dialect, scope, boundsOf(0, 0, Settings{}).schema)
	if err := d.parse(data); err != nil {
		return nil, err
	}
	return d, nil
}

func newDefinition(file string, dialect Dialect, scope Scope, schemaBound smallfile.Bound) *Definition {
	d := &Definition{File: file, Scope: scope, Dialect: dialect, lines: make(map[string][2]int), schemaBound: schemaBound}
	d.Binding.ToolName = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	d.Binding.Provider = "spawn"
	return d
}

// parse is [Parse] of d's file, whose text is data.
func (d *Definition) parse(data []byte) error {
	doc, err := frontmatter.Parse(data)
	if err != nil {
		return fileError(d.File, d.Scope, err)
	}
	b := &d.Binding
	var acp acpFields
	for _, f := range doc.Fields {
		d.lines[f.Key] = [2]int{f.Line, f.Column}
		if err := d.field(f, &acp); err != nil {
			return fileError(d.File, d.Scope, err)
		}
	}
	if !tools.ValidToolName(b.ToolName) {
		return d.errorAt(keyName, fmt.Errorf("%q is not a valid tool name (1-64 letters, digits, '_' or '-')", b.ToolName))
	}
	if strings.TrimSpace(b.Description) == "" {
		return d.errorAt(keyDescription, errors.New("required: say what the agent is for (it heads the tool's description)"))
	}
	if err := d.providerOptions(acp); err != nil {
		return err
	}
	body, skipped := trimBody(doc.Body)
	b.AgentOptions.SystemPrompt = body
	d.bodyLine = doc.BodyLine + skipped
	return nil
}

// field applies one front matter key.
func (d *Definition) field(f frontmatter.Field, acp *acpFields) error {
	b := &d.Binding
	str := func(dst *string) error {
		s, err := f.String()
		*dst = strings.TrimSpace(s)
		return err
	}
	switch f.Key {
	case keyName:
		return str(&b.ToolName)
	case keyDescription:
		return str(&b.Description)
	case keyProvider:
		return str(&b.Provider)
	case keyAgent:
		return str(&acp.agent)
	case keyCommand:
		return str(&acp.command)
	case keyArgs:
		l, err := f.List()
		acp.args = l
		return err
	case keySandbox, keyWritable, keyNetwork:
		return d.sandboxField(f, acp)
	case keyTools, keyDisallowedTools:
		names, err := f.List()
		if err != nil {
			return err
		}
		if len(names) == 0 && f.Key == keyTools {
			return f.Errorf("empty: list the tools the agent may use, or leave tools out to give it the parent's")
		}
		mapped, err := mapTools(names, d.Dialect)
		if err != nil {
			return f.Errorf("%v", err)
		}
		if b.Tools == nil {
			b.Tools = &subagents.ToolFilter{}
		}
		if f.Key == keyTools {
			b.Tools.Allow = mapped
		} else {
			b.Tools.Deny = mapped
		}
	case keyModel:
		var m string
		if err := str(&m); err != nil {
			return err
		}
		if m != Inherit {
			b.AgentOptions.Model, d.modelGiven = m, m
		}
	case keyOutputSchema:
		return d.schema(f)
	case keyMaxDepth, keyMaxTurns, keyMaxTokens:
		n, err := f.Int()
		if err != nil {
			return err
		}
		switch f.Key {
		case keyMaxDepth:
			b.MaxDepth = &n
		case keyMaxTurns:
			if n == 0 {
				return f.Errorf("want a whole number from 1")
			}
			b.Budget.MaxTurns = n
		default:
			if n == 0 {
				return f.Errorf("want a whole number from 1")
			}
			b.Budget.MaxTokens = n
		}
	case keyBackground:
		bg, err := f.Bool()
		b.Background = bg
		return err
	case keyPermissions:
		var p string
		if err := str(&p); err != nil {
			return err
		}
		switch p {
		case Inherit:
		case "deny":
			b.DenyPermissions = true
		default:
			return f.Errorf("want inherit or deny, not %q", p)
		}
	default:
		if d.Dialect == ClaudeCode {
			return claudeField(f, b)
		}
		return f.Errorf("unknown key (dshd takes %s)%s", strings.Join(dshdKeys, ", "), suggest.DidYouMean(f.Key, dshdKeys))
	}
	return nil
}

// schema reads outputSchema: a mapping is the schema itself; a string is
// the path of a JSON file, relative to the definition's directory.
func (d *Definition) schema(f frontmatter.Field) error {
	b := &d.Binding
	if f.IsString() {
		path, _ := f.String()
		if !filepath.IsAbs(path) {
			path = filepath.Join(filepath.Dir(d.File), path)
		}
		root, file, err := d.schemaFile(path)
		if err != nil {
			return f.Errorf("%v", err)
		}
		// Before the read: a change after it moves the stamp.
		d.schemaStamp, d.schemaRoot = mdfiles.StampOf(root, file), root
		raw, err := smallfile.ReadBelow(root, file, d.schemaBound)
		if err != nil {
			// The os package names the file as it was opened; the path
			// as written says more.
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return f.Errorf("%s: %v", path, err)
		}
		if !json.Valid(raw) {
			return f.Errorf("%s is not JSON", path)
		}
		b.OutputSchema, b.OutputSchemaFile = raw, path
		return nil
	}
	js, err := f.JSON()
	if err != nil {
		return err
	}
	if !strings.HasPrefix(string(js), "{") {
		return f.Errorf("want a JSON Schema (a mapping) or the path of a JSON file")
	}
	b.OutputSchema = js
	return nil
}

// schemaFile is where the schema file at path is read from. A workspace
// definition came with the repository, so its file is read from the
// workspace only, through the workspace as an os.Root (a link swapped in
// cannot lead out): root is the workspace, its links resolved, and file
// the path below it, or path leads out and is an error. The user's may be
// anywhere: root is "", and file is path.
func (d *Definition) schemaFile(path string) (root, file string, err error) {
	if d.Scope != ScopeWorkspace {
		return "", path, nil
	}
	root = workspaceOf(d.File)
	rel, ok := relIn(path, root)
	if !ok {
		return "", "", fmt.Errorf("%s is outside the workspace %s: %s name a file outside it", path, root, onlyTheUser)
	}
	return root, filepath.Join(root, rel), nil
}

// acpFields are the keys only the acp provider takes, as read.
type acpFields struct {
	command, agent string
	args           []string
	sandbox        sandboxFields
}

// providerOptions turns the acp keys into the acp provider's options;
// other providers take none of them.
func (d *Definition) providerOptions(acp acpFields) error {
	b := &d.Binding
	command, agent, args := acp.command, acp.agent, acp.args
	if b.Provider != "acp" {
		for _, k := range acpKeys {
			if _, given := d.lines[k]; given {
				return d.errorAt(k, fmt.Errorf("only the acp provider takes %s (this definition's provider is %s)", k, b.Provider))
			}
		}
		return nil
	}
	opts := map[string]string{}
	if agent != "" {
		opts["agent"] = agent
	}
	if command != "" {
		opts["command"] = command
	}
	if len(args) > 0 {
		if command == "" && agent == "" {
			return d.errorAt(keyArgs, errors.New("args need a command or an agent"))
		}
		opts["args"] = shellwords.Join(args)
	}
	if err := d.checkSelfArgs(acp); err != nil {
		return err
	}
	d.sandboxOptions(acp, opts)
	if len(opts) > 0 {
		b.Options = opts
	}
	return nil
}

// trimBody trims the body and says how many lines were skipped at its
// start, so an error in it points at the right line of the file.
func trimBody(body string) (string, int) {
	trimmed := strings.TrimLeft(body, " \t\r\n")
	skipped := strings.Count(body[:len(body)-len(trimmed)], "\n")
	return strings.TrimRight(trimmed, " \t\r\n"), skipped
}

// errorAt is an error at key's position.
func (d *Definition) errorAt(key string, err error) *Error {
	e := &Error{File: d.File, Key: key, Err: err, scope: d.Scope}
	if pos, ok := d.lines[key]; ok {
		e.Line, e.Column = pos[0], pos[1]
	}
	return e
}

// fileError turns a front matter error into an [*Error] of file.
func fileError(file string, scope Scope, err error) *Error {
	var fe *frontmatter.Error
	if errors.As(err, &fe) {
		return &Error{File: file, Line: fe.Line, Column: fe.Column, Key: fe.Key, Err: fe.Err, scope: scope}
	}
	return &Error{File: file, Err: err, scope: scope}
}
