// This file holds dshd's side on Linux: which namespaces the helper gets,
// and the one probe of what the kernel allows.

package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/dshd/dshd/tools/subproc"
)

// selfExe runs this very binary, even if its file was replaced or deleted
// since it started (an upgrade under a running daemon).
const selfExe = "/proc/self/exe"

// landlockABI reads the kernel's Landlock ABI version; tests replace it
// to play a kernel without Landlock.
var landlockABI = llsys.LandlockGetABIVersion

// setNamespaces puts the helper in a PID namespace of its own, a UTS
// namespace when confined (a hostname the command sets is its own), and a
// network namespace when the network is off, and a mount namespace when
// it hides paths (mounts). Without CAP_SYS_ADMIN that
// takes a user namespace (mapping only our own uid and gid), which is
// used only for confined commands: those run with no_new_privs anyway, so
// setuid programs do nothing for them either way. It reports whether it
// set any.
func setNamespaces(cmd *exec.Cmd, confined, network, mounts bool) bool {
	root := os.Geteuid() == 0
	if !root && !confined {
		return false
	}
	attr := &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
	if confined {
		attr.Cloneflags |= syscall.CLONE_NEWUTS
	}
	if network {
		attr.Cloneflags |= syscall.CLONE_NEWNET
	}
	if mounts {
		attr.Cloneflags |= syscall.CLONE_NEWNS
	}
	if !root {
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Geteuid(), HostID: os.Geteuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getegid(), HostID: os.Getegid(), Size: 1}}
		attr.GidMappingsEnableSetgroups = false
		if network {
			// Bringing up loopback takes CAP_NET_ADMIN in the new user
			// namespace, which a non-root helper loses at exec unless it
			// is ambient; the helper clears it before it forks the
			// command.
			attr.AmbientCaps = []uintptr{unix.CAP_NET_ADMIN}
		}
		if mounts {
			// Mounting, likewise, takes CAP_SYS_ADMIN in it.
			attr.AmbientCaps = append(attr.AmbientCaps, unix.CAP_SYS_ADMIN)
		}
	}
	cmd.SysProcAttr = attr
	return true
}

// probe finds out, once, what this kernel allows: the Landlock ABI, and
// whether the helper starts with its namespaces, or at all. It starts the
// helper with no command, which sets up what it was asked to and exits.
func probe(cfg *Config) support {
	var sup support
	if v, err := landlockABI(); err == nil {
		sup.abi = v
	}
	confine := cfg.Mode != Off
	network := confine && cfg.NoNetwork
	var errNS, errPlain error
	if !cfg.NoNamespaces {
		if errNS = tryHelper(cfg, true, confine, network, confine && len(cfg.Hidden) > 0); errNS == nil {
			sup.helper, sup.namespaces = true, true
		}
	}
	if !sup.helper {
		if errPlain = tryHelper(cfg, false, confine, false, false); errPlain == nil {
			sup.helper = true
		}
	}
	switch {
	case !sup.helper:
		sup.why = "the sandbox helper does not start: " + errPlain.Error()
	case !confine:
	case sup.abi == 0:
		sup.why = "this kernel has no Landlock (Linux 5.19 or later with the landlock LSM enabled is needed)"
	case sup.abi < minFSABI:
		sup.why = fmt.Sprintf("this kernel's Landlock ABI %d cannot allow renames inside the workspace (ABI %d, Linux 5.19, is needed)", sup.abi, minFSABI)
	case network && !sup.namespaces && sup.abi < minNetABI:
		sup.why = fmt.Sprintf("no network namespace can be made (%v) and Landlock ABI %d cannot restrict TCP (ABI %d, Linux 6.7, is needed)", errNS, sup.abi, minNetABI)
	}
	if len(cfg.Caches) == 0 && !cfg.NoCaches {
		// Go's build cache lives in the XDG cache dir; a fresh home has
		// none yet, and the sandbox cannot create it in the home.
		if caches := DefaultCaches(os.Getenv); len(caches) > 0 {
			_ = os.MkdirAll(caches[0], 0o755)
		}
	}
	return sup
}

// tryHelper starts the helper once with no command and reports whether it
// came up as asked. With mounts it gets its mount namespace but mounts
// nothing: a hidden path that cannot be mounted over refuses the command
// that would read it, rather than every command losing its namespaces.
func tryHelper(cfg *Config, namespaces, confine, network, mounts bool) error {
	p := policy{Loopback: namespaces && network, NoCaps: confine}
	enc, _ := json.Marshal(&p)
	cmd := exec.Command(cfg.Helper[0], append(append([]string(nil), cfg.Helper[1:]...), string(enc), "--")...)
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	cmd.ExtraFiles = []*os.File{w}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if namespaces && !setNamespaces(cmd, confine, network, mounts) {
		w.Close()
		return fmt.Errorf("no namespaces for unconfined commands without root")
	}
	wait, err := subproc.Launch(cmd, &subproc.Options{NewSession: true, DieWithParent: true})
	w.Close()
	if err != nil {
		return err
	}
	status, _ := io.ReadAll(io.LimitReader(r, 4096))
	if err := wait(); err != nil {
		return fmt.Errorf("%v: %s%s", err, strings.TrimSpace(string(status)), strings.TrimSpace(stderr.String()))
	}
	if got := strings.TrimSpace(string(status)); got != "exit 0" {
		return fmt.Errorf("the helper said %q", got)
	}
	return nil
}
