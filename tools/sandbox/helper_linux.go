// This file is the helper, the process between dshd and a command: it
// restricts itself, starts the command, reaps everything the command
// starts and ends what it leaves behind.

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/dshd/dshd/tools/subproc"
)

// statusFD is the helper's end of the status pipe (the first ExtraFile).
const statusFD = 3

// killRepeat is how often the helper repeats SIGKILL to descendants that
// appear while it ends them (a process forking as it dies).
const killRepeat = 20 * time.Millisecond

// Main runs the helper: `dshd sandbox POLICY -- ARGV...`, started by
// [Sandbox.Command] with the status pipe as fd 3. It returns the helper's
// exit code: the command's, or 128 plus the signal that killed it.
func Main(args []string) int {
	// The Landlock domain and no_new_privs are set on this thread, and the
	// command is forked from it: it never runs another goroutine.
	runtime.LockOSThread()
	// dshd passes a pipe; without one someone ran `dshd sandbox` by hand
	// (and fd 3 may be the runtime's own).
	status := os.Stderr
	var st unix.Stat_t
	if unix.Fstat(statusFD, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFIFO {
		syscall.CloseOnExec(statusFD)
		status = os.NewFile(statusFD, "status")
	}
	report := func(format string, a ...any) {
		fmt.Fprintf(status, format+"\n", a...)
	}
	if len(args) < 2 || args[1] != "--" {
		report("error usage: dshd sandbox POLICY -- COMMAND [ARG...]")
		return 2
	}
	var p policy
	if err := json.Unmarshal([]byte(args[0]), &p); err != nil {
		report("error sandbox: bad policy: %v", err)
		return 2
	}
	argv := args[2:]

	// Orphans of the command come to us, not to init: we end them.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		report("error sandbox: subreaper: %v", err)
		return 126
	}
	// Before anything is started: a SIGTERM from dshd (cancel) or the
	// parent-death signal must find the handler in place.
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, syscall.SIGCHLD)

	if p.Loopback {
		if err := loopbackUp(); err != nil {
			report("error sandbox: bringing up loopback: %v", err)
			return 126
		}
	}
	// Before Landlock, which forbids mounting.
	if len(p.Hidden) > 0 {
		if err := hide(p.Hidden); err != nil {
			report("error sandbox: %v", err)
			return 126
		}
	}
	if p.Confine {
		if err := restrict(&p); err != nil {
			report("error sandbox: %v", err)
			return 126
		}
	}
	// Last: loopback needed CAP_NET_ADMIN (the ambient one dshd passed as
	// non-root), and none of the command's may be left.
	if p.NoCaps {
		if err := dropCaps(); err != nil {
			report("error sandbox: dropping capabilities: %v", err)
			return 126
		}
	}
	if len(argv) == 0 {
		report("exit 0")
		return 0
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		report("error %v", err)
		return 127
	}
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{0, 1, 2}})
	if err != nil {
		report("error fork/exec %s: %v", path, err)
		return 126
	}
	code := supervise(pid, time.Duration(p.GraceMs)*time.Millisecond, stop, chld, report)
	return code
}

// supervise reaps every process until none is left: the command, and
// whatever it left behind, which gets SIGTERM when the command exits (or
// when we are told to stop), then SIGKILL after grace.
func supervise(pid int, grace time.Duration, stop, chld <-chan os.Signal, report func(string, ...any)) int {
	code := -1
	var deadline <-chan time.Time
	var repeat *time.Ticker
	defer func() {
		if repeat != nil {
			repeat.Stop()
		}
	}()
	ending := false
	end := func() {
		if !ending {
			ending = true
			signalDescendants(syscall.SIGTERM)
			deadline = time.After(grace)
		}
	}
	for {
		gone, exited, ws := reap(pid)
		if exited {
			switch {
			case ws.Signaled():
				report("signal %d", int(ws.Signal()))
				code = 128 + int(ws.Signal())
			default:
				report("exit %d", ws.ExitStatus())
				code = ws.ExitStatus()
			}
		}
		if gone {
			if code < 0 {
				report("error the command vanished")
				return 126
			}
			return code
		}
		if code >= 0 {
			end()
		}
		select {
		case <-chld:
		case <-stop:
			end()
		case <-deadline:
			deadline = nil
			signalDescendants(syscall.SIGKILL)
			repeat = time.NewTicker(killRepeat)
		case <-tickOf(repeat):
			signalDescendants(syscall.SIGKILL)
		}
	}
}

// tickOf is t's channel, or nil (never ready) before there is a ticker.
func tickOf(t *time.Ticker) <-chan time.Time {
	if t == nil {
		return nil
	}
	return t.C
}

// reap reaps every child that has exited. gone reports that no child is
// left; exited, that the command itself was among them, with its status.
func reap(pid int) (gone, exited bool, status syscall.WaitStatus) {
	for {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil: // ECHILD: nothing left
			return true, exited, status
		case wpid == 0:
			return false, exited, status
		case wpid == pid:
			exited, status = true, ws
		}
	}
}

// signalDescendants sends sig to every process below the helper. As the
// init of a PID namespace that is kill(-1); as a plain subreaper it walks
// /proc, which sees every descendant (orphans are reparented to us).
func signalDescendants(sig syscall.Signal) {
	if os.Getpid() == 1 {
		_ = syscall.Kill(-1, sig)
		return
	}
	for _, pid := range subproc.Descendants(os.Getpid()) {
		_ = syscall.Kill(pid, sig)
	}
}

// hide mounts over each path that exists, in the helper's own mount
// namespace: an empty read-only tmpfs on a directory, /dev/null (read
// only) on a file. The mounts are made private first, so none of this
// reaches dshd's namespace. A path that cannot be hidden is an error: the
// command must not run and read it.
func hide(paths []string) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making mounts private to hide %s: %w", paths[0], err)
	}
	for _, path := range paths {
		fi, err := os.Stat(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err == nil {
			err = hideOne(path, fi.IsDir())
		}
		if err != nil {
			return fmt.Errorf("hiding %s: %w", path, err)
		}
	}
	return nil
}

// hideOne mounts over one existing path.
func hideOne(path string, dir bool) error {
	if dir {
		return unix.Mount("tmpfs", path, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0555")
	}
	if err := unix.Mount("/dev/null", path, "", unix.MS_BIND, ""); err != nil {
		return err
	}
	// A bind mount takes the flags of /dev's mount, which a user
	// namespace may not clear on remount; /dev/null stays a device (no
	// nodev), and read only.
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return err
	}
	keep := uintptr(st.Flags) & (unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC | unix.MS_NOATIME | unix.MS_NODIRATIME | unix.MS_RELATIME)
	return unix.Mount("", path, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|keep, "")
}

// restrict applies the policy's Landlock rules to the calling thread, which
// must be locked to its goroutine, and so to every process it forks. Only
// that thread is restricted: the helper runs no code of the command's,
// and restricting one thread needs no signalling of the others (which
// libpsx, go-landlock's way with cgo, cannot do in a PID namespace's init).
func restrict(p *policy) error {
	cfg := landlock.V7
	cfg.Scoped = landlock.ScopedSet(llsys.ScopeSignal)
	if p.ScopeUnix {
		cfg.Scoped |= landlock.ScopedSet(llsys.ScopeAbstractUnixSocket)
	}
	if !p.DenyTCP {
		cfg.HandledAccessNet = 0
	}
	var rules []landlock.Rule
	if p.Read == nil {
		rules = append(rules, landlock.RODirs("/"))
	} else {
		rules = append(rules, landlock.RODirs(p.Read...).IgnoreIfMissing())
	}
	if len(p.Write) > 0 {
		rules = append(rules, landlock.RWDirs(p.Write...).WithRefer().IgnoreIfMissing())
	}
	if len(p.DevDirs) > 0 {
		rules = append(rules, landlock.RWDirs(p.DevDirs...).WithIoctlDev().IgnoreIfMissing())
	}
	if len(p.DevFiles) > 0 {
		rules = append(rules, landlock.RWFiles(p.DevFiles...).WithIoctlDev().IgnoreIfMissing())
	}
	fd, flags, err := cfg.BestEffort().NewRulesetFD(rules...)
	if err != nil {
		return err
	}
	if fd < 0 {
		return nil // no Landlock at all: dshd decided to run it anyway
	}
	defer unix.Close(fd)
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	return llsys.LandlockRestrictSelf(fd, flags)
}

// dropCaps leaves the calling thread, which must be locked to its
// goroutine, and so every process it forks, without any capability, even
// as root: a root command stays uid 0 (the owner of root's files) but
// cannot read dshd's memory or environment (CAP_SYS_PTRACE), configure
// the network (CAP_NET_ADMIN) or override file permissions. With the
// bounding set empty an exec grants root nothing, and under no_new_privs
// an exec gains nothing the thread does not hold.
func dropCaps() error {
	// The kernel's last capability is the last one PR_CAPBSET_READ
	// accepts (what /proc/sys/kernel/cap_last_cap says, with no file to
	// read in a confined helper).
	for c := 0; ; c++ {
		in, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0)
		if err == unix.EINVAL {
			break
		}
		if err != nil {
			return fmt.Errorf("reading the bounding set: %w", err)
		}
		if in == 0 {
			continue
		}
		err = unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		if err == unix.EPERM {
			// No CAP_SETPCAP (not root, or a container that took it):
			// the bounding set stays, and under no_new_privs with the
			// sets below empty it grants nothing.
			break
		}
		if err != nil {
			return fmt.Errorf("dropping capability %d from the bounding set: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clearing the ambient set: %w", err)
	}
	// Lowering the permitted, effective and inheritable sets needs no
	// privilege.
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData // version 3 takes two 32-bit halves
	if err := unix.Capset(&hdr, &none[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	// Already set where Landlock applied; not where the fallback runs the
	// command unconfined.
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	return nil
}

// loopbackUp brings up lo in the helper's fresh network namespace, so a
// command without network still reaches its own servers on 127.0.0.1.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}
