// This file starts the `dshd serve` daemons the socket and abuse measures
// talk to.

package main

import (
	"net"
	"os/exec"
	"syscall"
	"time"
)

// daemon is a `dshd serve` process started for one measure.
type daemon struct {
	cmd           *exec.Cmd
	network, addr string
}

// startDaemon starts `dshd serve` listening on network addr (tcp or unix)
// with its state in stateDir and the given environment, and waits until it
// accepts connections.
func (b *bench) startDaemon(network, addr, stateDir string, env []string, extra ...string) (*daemon, error) {
	args := append([]string{"serve", "--listen", network + ":" + addr, "--model", "scripted", "--state-dir", stateDir, "--log-level", "error"}, extra...)
	cmd := exec.Command(b.dshd, args...)
	cmd.Env = env
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	d := &daemon{cmd: cmd, network: network, addr: addr}
	deadline := time.Now().Add(10 * time.Second)
	for {
		nc, err := d.dial()
		if err == nil {
			nc.Close()
			return d, nil
		}
		if time.Now().After(deadline) {
			d.stop()
			return nil, err
		}
		time.Sleep(5 * time.Millisecond) // a tool polling a listener into existence, not a test
	}
}

// dial opens a connection to the daemon.
func (d *daemon) dial() (net.Conn, error) { return net.Dial(d.network, d.addr) }

// hwmKB is the daemon's peak RSS so far.
func (d *daemon) hwmKB() int64 { return procStatusKB(d.cmd.Process.Pid, "VmHWM:") }

// stop ends the daemon and returns its peak RSS from wait4, in KiB.
func (d *daemon) stop() int64 {
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	_ = d.cmd.Wait()
	return maxRSSKB(d.cmd.ProcessState)
}
