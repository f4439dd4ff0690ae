// This file reads the sandbox keys of an acp definition, and holds a
// workspace definition, which came with the repository, to a sandbox: its
// agent gets the workspace, not the machine.

package definition

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dshd/dshd/internal/frontmatter"
	"github.com/dshd/dshd/internal/sameprogram"
	"github.com/dshd/dshd/internal/shellwords"
	"github.com/dshd/dshd/subagents"
	"github.com/dshd/dshd/tools/sandbox"
)

// acpKeys are the keys only the acp provider takes.
var acpKeys = []string{keyAgent, keyCommand, keyArgs, keySandbox, keyWritable, keyNetwork}

// sandboxFields are the sandbox keys as read.
type sandboxFields struct {
	mode     *string
	writable []string
	network  *bool
}

// onlyTheUser says who may loosen a child agent's sandbox.
const onlyTheUser = "only a definition in the user's config dir ($XDG_CONFIG_HOME/dshd/agents) or an agents entry of the config file may"

// sandboxField reads sandbox, writable or network. A workspace definition
// may not turn the sandbox off nor make a directory outside its workspace
// writable; the provider checks the rest when the binding is checked.
func (d *Definition) sandboxField(f frontmatter.Field, acp *acpFields) error {
	box := &acp.sandbox
	switch f.Key {
	case keySandbox:
		s, err := f.String()
		if err != nil {
			return err
		}
		s = strings.TrimSpace(s)
		if mode, err := sandbox.ParseMode(s); err == nil && mode == sandbox.Off && d.Scope == ScopeWorkspace {
			return f.Errorf("a workspace definition cannot run its agent unconfined: %s set sandbox: off", onlyTheUser)
		}
		box.mode = &s
	case keyWritable:
		dirs, err := f.List()
		if err != nil {
			return err
		}
		if d.Scope == ScopeWorkspace {
			root := workspaceOf(d.File)
			for _, dir := range dirs {
				if filepath.IsAbs(dir) && !within(dir, root) {
					return f.Errorf("%s is outside the workspace %s: %s let its agent write there", dir, root, onlyTheUser)
				}
			}
		}
		box.writable = dirs
	case keyNetwork:
		on, err := f.Bool()
		if err != nil {
			return err
		}
		box.network = &on
	}
	return nil
}

// sandboxOptions adds the sandbox keys to opts, the acp provider's
// options. A workspace definition that runs a program of its own (not a
// child dshd, not an agent of the user's config file) runs it in the
// workspace-write sandbox unless it asks for read-only.
func (d *Definition) sandboxOptions(acp acpFields, opts map[string]string) {
	box := acp.sandbox
	switch {
	case box.mode != nil:
		opts[keySandbox] = *box.mode
	case d.Scope == ScopeWorkspace && acp.command != "" && !runsSelf(acp.command):
		opts[keySandbox] = string(sandbox.WorkspaceWrite)
	}
	if box.writable != nil {
		opts[keyWritable] = shellwords.Join(box.writable)
	}
	if box.network != nil {
		opts[keyNetwork] = strconv.FormatBool(*box.network)
	}
}

// checkSelfArgs keeps a workspace definition whose command is a child
// dshd from loosening its sandbox through its arguments (see
// [selfArgsError]); when read, since the command is the file's.
func (d *Definition) checkSelfArgs(acp acpFields) error {
	if d.Scope != ScopeWorkspace || acp.command == "" || len(acp.args) == 0 || !runsSelf(acp.command) {
		return nil
	}
	if err := selfArgsError(acp.args, ""); err != nil {
		return d.errorAt(keyArgs, err)
	}
	return nil
}

// checkAgentArgs holds the arguments a workspace definition gives an
// agent of the config file, which replace the agent's own, to the rules
// of a workspace's own command: a program the user left unconfined gets
// none (they would choose what it does, outside any sandbox), and a
// child dshd none that loosen its sandbox ([selfArgsError]). Only the
// provider knows what the agent runs, so this is checked against the
// providers, when the definition is; a provider that cannot say is taken
// to run an unconfined child dshd.
func (d *Definition) checkAgentArgs(svc *subagents.Service) *Error {
	opts := d.Binding.Options
	agent, named := opts[keyAgent]
	_, hasCommand := opts[keyCommand]
	if d.Scope != ScopeWorkspace || !named || hasCommand || opts[keyArgs] == "" {
		return nil
	}
	self, unconfined := true, true
	if p, ok := svc.Provider(d.Binding.Provider); ok {
		if r, ok := p.(interface {
			Runs(map[string]string) (self, unconfined bool)
		}); ok {
			self, unconfined = r.Runs(opts)
		}
	}
	if unconfined {
		return d.errorAt(keyArgs, fmt.Errorf("the agent %s of the config file runs unconfined, and a workspace definition cannot choose its arguments: %s (or give the agent a sandbox in its entry)", agent, onlyTheUser))
	}
	if !self {
		return nil
	}
	args, err := shellwords.Split(opts[keyArgs])
	if err != nil {
		return d.errorAt(keyArgs, err)
	}
	if err := selfArgsError(args, agent); err != nil {
		return d.errorAt(keyArgs, err)
	}
	return nil
}

// selfArgsError keeps a workspace's file from loosening a child dshd's
// sandbox through its arguments: the child runs in the daemon's sandbox,
// its commands and MCP servers in the one its flags say, and its state
// dir is made writable for it, so a workspace file may set none of
// --sandbox*, --mcp-sandbox, --state-dir and --config (a config file
// sets all of them). agent names the config file's agent the arguments
// go to, "" for the file's own command.
func selfArgsError(args []string, agent string) error {
	for _, a := range args {
		name, _, _ := strings.Cut(a, "=")
		if name == "--state-dir" || name == "--config" || name == "--mcp-sandbox" || name == "--sandbox" || strings.HasPrefix(name, "--sandbox-") {
			to := "a child dshd"
			if agent != "" {
				to += " (the agent " + agent + " of the config file runs one)"
			}
			return fmt.Errorf("a workspace definition cannot pass %s to %s, since it sets the child's sandbox or what it may write: %s pass it", name, to, onlyTheUser)
		}
	}
	return nil
}

// workspaceOf is the workspace of a workspace definition's file: the
// directory its .dshd/agents or .claude/agents is in.
func workspaceOf(file string) string {
	return resolve(filepath.Dir(filepath.Dir(filepath.Dir(file))))
}

// within reports whether dir is root or below it, symbolic links
// resolved as far as they exist: a link in the workspace to a directory
// outside is outside.
func within(dir, root string) bool {
	_, ok := relIn(dir, root)
	return ok
}

// relIn is path relative to root, symbolic links resolved as far as they
// exist, and whether it is root or below it.
func relIn(path, root string) (string, bool) {
	rel, err := filepath.Rel(root, resolve(path))
	return rel, err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// resolve is path, clean, with the symbolic links of its longest part
// that exists resolved.
func resolve(path string) string {
	path = filepath.Clean(path)
	rest := ""
	for {
		if real, err := filepath.EvalSymlinks(path); err == nil {
			return filepath.Join(real, rest)
		}
		parent := filepath.Dir(path)
		if parent == path {
			return filepath.Join(path, rest)
		}
		rest = filepath.Join(filepath.Base(path), rest)
		path = parent
	}
}

// runsSelf reports whether command is this program (a child dshd, which
// the acp provider confines in the daemon's own sandbox). The daemon's acp
// provider runs this executable as its child dshd.
func runsSelf(command string) bool {
	self, err := os.Executable()
	return err == nil && sameprogram.Is(command, self)
}

// providerKey is the acp provider's binding option a mistake is in, when
// its error names one (its OptionKey method).
func providerKey(err error) string {
	var k interface{ OptionKey() string }
	if errors.As(err, &k) {
		return k.OptionKey()
	}
	return ""
}

// keyedMessage is a provider's message about key without the key's name
// in front, which the definition's error puts there.
func keyedMessage(err error, key string) error {
	msg := err.Error()
	for _, p := range []string{key + ": ", key + " "} {
		if rest, ok := strings.CutPrefix(msg, p); ok {
			return errors.New(rest)
		}
	}
	return err
}
