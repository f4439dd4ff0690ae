// This file implements Start.

package piped

import (
	"io"
	"os/exec"
)

// Start starts cmd with pipes on its stdin and stdout and returns them.
// Whatever else cmd needs (Stderr, Env, Dir) is set before the call.
func Start(cmd *exec.Cmd) (stdin io.WriteCloser, stdout io.ReadCloser, err error) {
	if stdin, err = cmd.StdinPipe(); err != nil {
		return nil, nil, err
	}
	if stdout, err = cmd.StdoutPipe(); err != nil {
		return nil, nil, err
	}
	if err = cmd.Start(); err != nil {
		return nil, nil, err
	}
	return stdin, stdout, nil
}
