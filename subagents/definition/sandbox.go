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

// checkSelfArgs keeps a workspace definition that runs a child dshd from
// loosening its sandbox through its arguments: the child runs in the
// daemon's sandbox, its commands and MCP servers in the one its flags
// say, and its state dir is made writable for it, so a workspace file may
// set none of --sandbox*, --mcp-sandbox and --state-dir.
func (d *Definition) checkSelfArgs(acp acpFields) error {
	if d.Scope != ScopeWorkspace || acp.command == "" || len(acp.args) == 0 || !runsSelf(acp.command) {
		return nil
	}
	for _, a := range acp.args {
		name, _, _ := strings.Cut(a, "=")
		if name == "--state-dir" || name == "--mcp-sandbox" || name == "--sandbox" || strings.HasPrefix(name, "--sandbox-") {
			return d.errorAt(keyArgs, fmt.Errorf("a workspace definition cannot pass %s to a child dshd, since it sets the child's sandbox or what it may write: %s pass it", name, onlyTheUser))
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
	rel, err := filepath.Rel(root, resolve(dir))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
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
