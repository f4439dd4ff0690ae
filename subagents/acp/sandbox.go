// This file confines a child agent process the way dshd confines a
// command: the binding's sandbox, writable and network keys, the default
// of a child dshd, and the sandboxes built from the daemon's settings.

package acpprovider

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dshd/dshd/internal/settingnames"
	"github.com/dshd/dshd/internal/shellwords"
	"github.com/dshd/dshd/tools/sandbox"
)

// Binding option keys of the sandbox of a child process.
const (
	// KeySandbox confines a child process: workspace-write (it writes
	// only below the workspace roots, its writable dirs, a private temp
	// dir and the toolchain caches), read-only (only its writable dirs
	// and the temp dir) or off; bare means workspace-write. The default
	// is off, except for a child dshd (see [Options.Sandbox]).
	KeySandbox = "sandbox"
	// KeyWritable are more absolute directories the child may write in
	// its sandbox (words): an agent's own state, like ~/.claude.
	KeyWritable = "writable"
	// KeyNetwork (true/false, bare for true; default true) says whether a
	// sandboxed child reaches the network: an agent needs its model's
	// API. false leaves it only a loopback of its own.
	KeyNetwork = "network"
)

// optionError is a mistake in the value of one binding option. Its
// OptionKey names the option, so that a caller that set it from elsewhere
// (an agent definition's front matter key) can point there; its text is
// the message as a binding's.
type optionError struct {
	key string
	err error
}

func (e *optionError) Error() string     { return e.err.Error() }
func (e *optionError) Unwrap() error     { return e.err }
func (e *optionError) OptionKey() string { return e.key }

// keyed is err as a mistake in the option key.
func keyed(key string, err error) error { return &optionError{key: key, err: err} }

// confinement is the sandbox of a stdio child.
type confinement struct {
	// mode is WorkspaceWrite, ReadOnly, or Off for none.
	mode sandbox.Mode
	// writable are the agent's own directories, absolute and clean.
	writable  []string
	noNetwork bool
	// inherited is set when the mode is the daemon's rather than the
	// binding's: where the kernel cannot confine, such a child runs
	// unconfined (logged once) instead of being refused, since a child
	// dshd confines (or refuses) its own commands anyway.
	inherited bool
	// entry names the config file's agents entry whose sandbox keys
	// these are; "" when they are the binding's (it names no agent, or
	// sets a sandbox key itself). Messages point at the setting there.
	entry string
}

// entryOf is the agents entry a binding's sandbox keys come from, "" for
// the binding itself ([confinement.entry]).
func entryOf(opts map[string]string) string {
	for _, k := range []string{KeySandbox, KeyWritable, KeyNetwork} {
		if _, ok := opts[k]; ok {
			return ""
		}
	}
	return opts[KeyAgent]
}

// sandboxOptions reads the sandbox keys of a binding into a.
func sandboxOptions(a *AgentConfig, opts map[string]string) error {
	if v, ok := opts[KeySandbox]; ok {
		if v == "" {
			v = string(sandbox.WorkspaceWrite)
		}
		a.Sandbox = v
	}
	if v, ok := opts[KeyWritable]; ok {
		words, err := shellwords.Split(v)
		if err != nil {
			return keyed(KeyWritable, fmt.Errorf("%s: %w", KeyWritable, err))
		}
		a.Writable = append(a.Writable, words...)
	}
	if v, ok := opts[KeyNetwork]; ok {
		on := true
		if v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return keyed(KeyNetwork, fmt.Errorf("%s: %q is not true or false", KeyNetwork, v))
			}
			on = b
		}
		a.NoNetwork = !on
	}
	return nil
}

// confinementOf checks a's sandbox settings for t and fills in the
// default: off, or for a child dshd the daemon's mode (its state dir is
// added when it starts: [Provider.confinementIn]).
func (p *Provider) confinementOf(t *target, a AgentConfig) (confinement, error) {
	asked := a.Sandbox != "" || len(a.Writable) > 0 || a.NoNetwork
	// needs is the key that needs a sandbox: writable, else network.
	needs := KeyWritable
	if len(a.Writable) == 0 {
		needs = KeyNetwork
	}
	if !t.stdio() {
		if asked {
			key := needs
			if a.Sandbox != "" {
				key = KeySandbox
			}
			return confinement{}, keyed(key, fmt.Errorf("%s=, %s= and %s= confine a command on stdio; the agent at %s runs elsewhere", KeySandbox, KeyWritable, KeyNetwork, t.where()))
		}
		return confinement{mode: sandbox.Off}, nil
	}
	var c confinement
	for _, d := range a.Writable {
		if !filepath.IsAbs(d) {
			return confinement{}, keyed(KeyWritable, fmt.Errorf("%s: %q is not an absolute path", KeyWritable, d))
		}
		c.writable = append(c.writable, filepath.Clean(d))
	}
	c.noNetwork = a.NoNetwork
	switch {
	case a.Sandbox != "":
		mode, err := sandbox.ParseMode(a.Sandbox)
		if err != nil {
			return confinement{}, keyed(KeySandbox, err)
		}
		c.mode = mode
		if mode == sandbox.Off && (len(c.writable) > 0 || c.noNetwork) {
			return confinement{}, keyed(needs, fmt.Errorf("%s= and %s= need a sandbox, and this binding has %s=off", KeyWritable, KeyNetwork, KeySandbox))
		}
	case t.self && p.o.Sandbox != nil:
		mode, err := sandbox.ParseMode(string(p.o.Sandbox.Mode))
		if err != nil {
			return confinement{}, err
		}
		c.mode, c.inherited = mode, true
	case t.self:
		c.mode = sandbox.Off
	default:
		if asked {
			return confinement{}, keyed(needs, fmt.Errorf("%s= and %s= need a sandbox: add %s=workspace-write or %s=read-only", KeyWritable, KeyNetwork, KeySandbox, KeySandbox))
		}
		c.mode = sandbox.Off
	}
	return c, nil
}

// confinementIn is the confinement of t's process when it runs in dir: a
// child dshd writes its journals (and checkouts) in its state dir, which
// depends on dir when its settings name it relatively, so it is resolved
// as the child will resolve it there.
func (p *Provider) confinementIn(t *target, dir string) confinement {
	c := t.box
	if c.mode != sandbox.Off && t.self {
		if sd := p.stateDirOf(t, dir); sd != "" {
			c.writable = append(slices.Clone(c.writable), sd)
		}
	}
	return c
}

// Runs reports what the binding opts runs on stdio: a child dshd (self:
// this program, by default or by name, through a named agent too, which
// gets the daemon's sandbox and its own state dir writable, so that its
// arguments matter to its confinement), and whether it runs without a
// sandbox (unconfined). Agent definitions hold the arguments a
// workspace's file gives a named agent to their rules with it. An agent
// at an address, and options that cannot work, are neither
// ([Provider.CheckOptions] says why).
func (p *Provider) Runs(opts map[string]string) (self, unconfined bool) {
	t, err := p.resolveTarget(opts)
	if err != nil || !t.stdio() {
		return false, false
	}
	return t.self, t.box.mode == sandbox.Off
}

// stateDirOf is the state dir of the child dshd t running in dir, as its
// arguments and the environment it will get resolve it there
// ([Options.StateDirOf]), or "".
func (p *Provider) stateDirOf(t *target, dir string) string {
	if p.o.StateDirOf == nil {
		return ""
	}
	env := map[string]string{}
	for _, kv := range t.environ() {
		name, value, _ := strings.Cut(kv, "=")
		env[name] = value
	}
	sd, err := p.o.StateDirOf(t.args, func(name string) (string, bool) {
		v, ok := env[name]
		return v, ok
	}, dir)
	if err != nil {
		// The child stops on the same mistake, and its stderr says it.
		p.log.Debug("the state dir of a child dshd is not known", "agent", t.label, "err", err)
		return ""
	}
	if !filepath.IsAbs(sd) {
		return ""
	}
	return filepath.Clean(sd)
}

// sandboxFor returns the sandbox of a child confined by c (nil for
// none), one per distinct confinement, so the kernel is probed once for
// each.
func (p *Provider) sandboxFor(c confinement) (*sandbox.Sandbox, error) {
	if c.mode == sandbox.Off {
		return nil, nil
	}
	cfg := p.configFor(c)
	key, err := json.Marshal([]any{cfg.WritableRoots, cfg.NoCaches, cfg.NoNetwork, cfg.Fallback})
	if err != nil {
		return nil, err
	}
	p.boxMu.Lock()
	defer p.boxMu.Unlock()
	if sb := p.boxes[string(key)]; sb != nil {
		return sb, nil
	}
	cfg.Logger = p.log.With("sandbox", "child agents")
	cfg.Subject = "child agents"
	cfg.OptOut = fmt.Sprintf("%s unconfined, or %s=off on the agent's binding (%s: off in its agents entry)", cfg.Settings.Fallback, KeySandbox, KeySandbox)
	sb, err := sandbox.New(&cfg)
	if err != nil {
		return nil, err
	}
	if p.boxes == nil {
		p.boxes = map[string]*sandbox.Sandbox{}
	}
	p.boxes[string(key)] = sb
	return sb, nil
}

// configFor is the sandbox settings of a child confined by c: the
// daemon's, with the child's own writable dirs and network.
func (p *Provider) configFor(c confinement) sandbox.Config {
	var cfg sandbox.Config
	if p.o.Sandbox != nil {
		cfg = *p.o.Sandbox
	}
	// Both modes are workspace-write to the sandbox: a read-only agent
	// still writes its own directories, and gets no workspace roots.
	cfg.Mode = sandbox.WorkspaceWrite
	// An agent reads its own runtime and settings wherever they live.
	cfg.ReadableRoots = nil
	cfg.NoNetwork = c.noNetwork
	if c.mode == sandbox.ReadOnly {
		cfg.WritableRoots, cfg.NoCaches = c.writable, true
	} else {
		cfg.WritableRoots = slices.Concat(cfg.WritableRoots, c.writable)
	}
	if c.inherited {
		cfg.Fallback = sandbox.Unconfined
	}
	// The words of its refusals and notes name the daemon's settings.
	settingnames.Fill(&cfg.Settings)
	return cfg
}
