// This file holds the settings, the availability probe and the wording of
// a sandbox: what a command may touch, and how that is said.

package sandbox

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dshd/dshd/internal/settingnames"
	"github.com/dshd/dshd/tools/internal/choice"
)

// Mode is how much a command may change.
type Mode string

// The modes.
const (
	// WorkspaceWrite lets a command write below the workspace roots, the
	// additional writable roots, its temp dir and the toolchain caches.
	WorkspaceWrite Mode = "workspace-write"
	// ReadOnly lets a command write only its temp dir.
	ReadOnly Mode = "read-only"
	// Off confines nothing; commands still die with dshd.
	Off Mode = "off"
)

// ParseMode reads a mode name; "" is WorkspaceWrite.
func ParseMode(s string) (Mode, error) {
	return choice.Parse("sandbox", s, WorkspaceWrite, ReadOnly, Off)
}

// Fallback is what happens to commands where the kernel cannot confine
// them.
type Fallback string

// The fallbacks.
const (
	// Refuse fails every command that would have been confined.
	Refuse Fallback = "refuse"
	// Unconfined runs them anyway, without confinement.
	Unconfined Fallback = "unconfined"
)

// ParseFallback reads a fallback name; "" is Refuse.
func ParseFallback(s string) (Fallback, error) {
	return choice.Parse("sandbox fallback", s, Refuse, Unconfined)
}

// ErrRefused is returned for a command the sandbox will not run because
// the kernel cannot confine it and the fallback is Refuse.
var ErrRefused = errors.New("sandbox: command refused")

// DefaultGrace is the time a command's leftovers get between SIGTERM and
// SIGKILL when Config.Grace is zero.
const DefaultGrace = 2 * time.Second

// Config is a sandbox's settings. The zero value is the default:
// workspace-write, network on, reads everywhere, the default caches,
// refuse where Landlock is missing.
type Config struct {
	Mode Mode
	// NoNetwork takes the network away from commands (loopback stays).
	NoNetwork bool
	// WritableRoots are more directories commands may write below, in
	// workspace-write mode.
	WritableRoots []string
	// ReadableRoots, when not empty, confine reads (and execution) to
	// these directories, the workspace, the writable roots and the system
	// directories ([SystemDirs]); empty means reads everywhere.
	ReadableRoots []string
	// Hidden are files and directories of dshd's that hold secrets (its
	// stored keys, its token file), absolute paths: a confined command in
	// the helper's namespaces sees each directory empty and each file
	// empty, whatever the read roots. Paths that do not exist are skipped.
	// Without namespaces (NoNamespaces, or a kernel without user
	// namespaces) they stay readable: Landlock only allows, it cannot
	// subtract.
	Hidden []string
	// NoCaches keeps the toolchain caches read-only.
	NoCaches bool
	// Caches are the toolchain caches writable in workspace-write mode;
	// nil means DefaultCaches of dshd's environment.
	Caches []string
	// Fallback applies where the kernel has no (or too old a) Landlock.
	Fallback Fallback
	// Helper is the helper's command line prefix, to which POLICY -- ARGV
	// is appended; nil means this binary's `sandbox` command
	// (/proc/self/exe sandbox). Tests point it at the test binary.
	Helper []string
	// Grace is the time leftovers get between SIGTERM and SIGKILL; zero
	// means DefaultGrace.
	Grace time.Duration
	// TempDir is where commands' private temp dirs are made; "" means
	// os.TempDir().
	TempDir string
	// NoNamespaces keeps the helper out of PID, network and user
	// namespaces even where the kernel offers them (it then ends
	// leftovers as a subreaper). For tests and odd kernels.
	NoNamespaces bool
	// Logger receives the one loud record about a missing Landlock and
	// debug records; nil discards them.
	Logger *slog.Logger
	// Subject names what this sandbox runs, for its refusals and its
	// record about a missing Landlock; "" means commands.
	Subject string
	// OptOut names the settings that would let a refused Subject run
	// unconfined; "" means the command settings, Settings.Fallback
	// unconfined or Settings.Mode off. A sandbox of something other than
	// commands sets both, so its refusal points at its own setting.
	OptOut string
	// Settings name the settings behind this Config in its refusals,
	// descriptions and notes (the daemon's flags), so that they say what
	// to change.
	Settings Settings
}

// Settings name the settings of [Config] that a refusal, a description or
// a note tells the user to change, one field for each of the same name
// (Network for NoNetwork: the setting that gives the network back); an
// empty field is that name.
type Settings struct {
	Mode, Fallback, Network, WritableRoots, ReadableRoots string
}

// Sandbox runs commands as its Config says. A nil *Sandbox runs them
// directly, unconfined, without the helper. It is safe for concurrent
// use.
type Sandbox struct {
	cfg     Config
	log     *slog.Logger
	writes  []string // extra writable roots and caches, cleaned
	reads   []string // nil: everywhere
	hidden  []string // cleaned
	probe   sync.Once
	support support // set by probe
}

// support is what the probe found this kernel and binary can do.
type support struct {
	// helper: the helper starts at all; namespaces: in its own PID (and
	// network, and for non-root user) namespace.
	helper, namespaces bool
	// abi is the Landlock ABI version, 0 for none.
	abi int
	// why says what is missing when the configured sandbox cannot be had.
	why string
}

// Minimum Landlock ABI versions: 2 for removing and renaming across
// directories (refer), 4 for TCP rules.
const (
	minFSABI  = 2
	minNetABI = 4
)

// New returns a sandbox; cfg may be nil for the defaults. The kernel is
// probed at the first command, not here.
func New(cfg *Config) (*Sandbox, error) {
	s := &Sandbox{}
	if cfg != nil {
		s.cfg = *cfg
	}
	var err error
	if s.cfg.Mode, err = ParseMode(string(s.cfg.Mode)); err != nil {
		return nil, err
	}
	if s.cfg.Fallback, err = ParseFallback(string(s.cfg.Fallback)); err != nil {
		return nil, err
	}
	s.cfg.Grace = cmp.Or(s.cfg.Grace, DefaultGrace)
	settingnames.Fill(&s.cfg.Settings)
	s.log = cmp.Or(s.cfg.Logger, slog.New(slog.DiscardHandler))
	if s.cfg.Helper == nil {
		s.cfg.Helper = []string{selfExe, "sandbox"}
	}
	for _, list := range [][]string{s.cfg.WritableRoots, s.cfg.ReadableRoots} {
		for _, d := range list {
			if !filepath.IsAbs(d) {
				return nil, fmt.Errorf("sandbox: roots must be absolute: %q", d)
			}
		}
	}
	for _, p := range s.cfg.Hidden {
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("sandbox: hidden paths must be absolute: %q", p)
		}
	}
	s.hidden = cleanAll(s.cfg.Hidden)
	s.writes = cleanAll(s.cfg.WritableRoots)
	if !s.cfg.NoCaches {
		caches := s.cfg.Caches
		if caches == nil {
			caches = DefaultCaches(os.Getenv)
		}
		s.writes = append(s.writes, cleanAll(caches)...)
	}
	if len(s.cfg.ReadableRoots) > 0 {
		s.reads = cleanAll(s.cfg.ReadableRoots)
	}
	return s, nil
}

func cleanAll(dirs []string) []string {
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		if d != "" {
			out = append(out, filepath.Clean(d))
		}
	}
	return out
}

// DefaultCaches are the toolchain caches builds and tests write, found
// from an environment (os.Getenv): the XDG cache dir, Go's module cache
// and GOPATH, npm, yarn, pnpm, bun, Cargo and rustup, Gradle, Maven, Ivy
// and sbt, NuGet, pub, gem and bundler, ccache, Haskell's stack and cabal.
// Those that do not exist are skipped when a command starts; the XDG cache
// dir is created if missing (Go's build cache lives there).
func DefaultCaches(getenv func(string) string) []string {
	home := getenv("HOME")
	var out []string
	add := func(env, fallback string) {
		if v := getenv(env); env != "" && v != "" {
			for _, p := range filepath.SplitList(v) {
				if filepath.IsAbs(p) {
					out = append(out, p)
				}
			}
			return
		}
		if home != "" && fallback != "" {
			out = append(out, filepath.Join(home, fallback))
		}
	}
	add("XDG_CACHE_HOME", ".cache")
	add("GOPATH", "go")
	add("GOMODCACHE", "")
	add("GOCACHE", "")
	add("npm_config_cache", ".npm")
	add("CARGO_HOME", ".cargo")
	add("RUSTUP_HOME", ".rustup")
	add("GRADLE_USER_HOME", ".gradle")
	for _, d := range []string{
		".m2", ".ivy2", ".sbt", ".yarn", ".pnpm-store", ".local/share/pnpm",
		".bun", ".deno", ".nuget/packages", ".pub-cache", ".gem", ".bundle",
		".ccache", ".stack", ".cabal", ".node-gyp", ".local/share/virtualenv",
	} {
		add("", d)
	}
	return out
}

// SystemDirs are readable (and executable) when ReadableRoots confine
// reads: where programs, libraries and system configuration live.
var SystemDirs = []string{
	"/bin", "/sbin", "/usr", "/lib", "/lib32", "/lib64", "/libx32", "/etc",
	"/opt", "/nix", "/snap", "/proc", "/sys", "/dev", "/run", "/var/lib",
}

// devFiles are the device files every confined command may write (and
// use ioctls on), devDirs the device directories.
var (
	devFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx"}
	devDirs  = []string{"/dev/pts", "/dev/shm"}
)

// Mode returns the configured mode.
func (s *Sandbox) Mode() Mode {
	if s == nil {
		return Off
	}
	return s.cfg.Mode
}

// confines reports whether the configured mode confines anything.
func (s *Sandbox) confines() bool { return s != nil && s.cfg.Mode != Off }

// supported probes the kernel once and says loudly what is missing.
func (s *Sandbox) supported() support {
	s.probe.Do(func() {
		s.support = probe(&s.cfg)
		switch {
		case !s.support.helper:
			s.log.Error("sandbox: the helper cannot start; commands run without it: they are not confined and may outlive dshd",
				"err", s.support.why)
		case s.confines() && s.support.why != "" && s.cfg.Fallback == Refuse:
			s.log.Error("sandbox: this kernel cannot confine "+s.subject()+", so they are refused (to run them unconfined, set "+s.optOut()+")",
				"reason", s.support.why, "mode", s.cfg.Mode)
		case s.confines() && s.support.why != "":
			s.log.Error("sandbox: this kernel cannot confine "+s.subject()+"; they run UNCONFINED (the fallback is unconfined)",
				"reason", s.support.why, "mode", s.cfg.Mode)
		}
		s.log.Debug("sandbox probed", "landlock_abi", s.support.abi, "namespaces", s.support.namespaces, "mode", s.cfg.Mode)
	})
	return s.support
}

// unconfinedReason returns why a command that should be confined will
// not be ("" when it will be, or when nothing is to be confined).
func (s *Sandbox) unconfinedReason() string {
	if !s.confines() {
		return ""
	}
	return s.supported().why
}

// Describe says in which sandbox a command with the given workspace roots
// runs, in words for a permission question. It returns ErrRefused (with
// the reason) when the command would be refused.
func (s *Sandbox) Describe(roots []string) (string, error) {
	if s == nil {
		return "no sandbox: the command runs unconfined", nil
	}
	if why := s.unconfinedReason(); why != "" {
		if s.cfg.Fallback == Refuse {
			return "", s.refusal(why)
		}
		return "no sandbox (" + why + "; " + s.cfg.Settings.Fallback + " unconfined): the command runs unconfined", nil
	}
	var b strings.Builder
	switch s.cfg.Mode {
	case Off:
		return "no sandbox (" + s.cfg.Settings.Mode + " off): the command runs unconfined", nil
	case ReadOnly:
		b.WriteString("read-only sandbox: writes only to a private temp dir")
	default:
		b.WriteString("workspace-write sandbox: writes only to ")
		b.WriteString(strings.Join(quoteAll(roots), ", "))
		if len(s.cfg.WritableRoots) > 0 {
			b.WriteString(", " + strings.Join(quoteAll(s.cfg.WritableRoots), ", "))
		}
		b.WriteString(", a private temp dir")
		if !s.cfg.NoCaches {
			b.WriteString(" and the toolchain caches")
		}
	}
	if s.reads != nil {
		b.WriteString("; reads only the workspace, the system directories and " + strings.Join(quoteAll(s.reads), ", "))
	}
	if s.cfg.NoNetwork {
		b.WriteString("; no network (loopback only)")
	} else {
		b.WriteString("; network allowed")
	}
	return b.String(), nil
}

func quoteAll(dirs []string) []string {
	out := make([]string, len(dirs))
	for i, d := range dirs {
		out[i] = "`" + d + "`"
	}
	return out
}

// refusal is the error of a refused command: what is missing and the
// settings that would let it run.
func (s *Sandbox) refusal(why string) error {
	return fmt.Errorf("%w: the %s sandbox is unavailable (%s); to run %s unconfined, set %s", ErrRefused, s.cfg.Mode, why, s.subject(), s.optOut())
}

// subject is what the sandbox runs, in words.
func (s *Sandbox) subject() string { return cmp.Or(s.cfg.Subject, "commands") }

// optOut is the settings that let a refused subject run unconfined.
func (s *Sandbox) optOut() string {
	return cmp.Or(s.cfg.OptOut, s.cfg.Settings.Fallback+" unconfined or "+s.cfg.Settings.Mode+" off")
}

// writableFor returns every directory a command with these workspace
// roots may write below, temp dir excluded.
func (s *Sandbox) writableFor(roots []string) []string {
	if s.cfg.Mode != WorkspaceWrite {
		return nil
	}
	return slices.Concat(cleanAll(roots), s.writes)
}
