// This file forks children from one goroutine locked to its own OS
// thread, for the parent-death signal.

package subproc

import (
	"os/exec"
	"runtime"
	"sync"
)

// forker forks every child that must die with this process. It is
// process-wide because the thread it stands for is: one locked thread
// serves all such children.
var forker spawner

// spawner forks children from one goroutine locked to its own OS thread.
// On Linux a child's parent-death signal fires when the thread that forked
// it exits; Go may end any thread a goroutine locked and left, so these
// children are never forked from an arbitrary goroutine. The goroutine
// (and its thread) exists while any child it forked is unreaped, and ends
// with the last one.
type spawner struct {
	mu   sync.Mutex
	live int               // children forked and not yet reaped; guarded by mu
	reqs chan spawnRequest // nil while no spawner goroutine runs; guarded by mu
}

type spawnRequest struct {
	cmd  *exec.Cmd
	done chan error
}

// start starts cmd; release must be called once the child was reaped.
func (s *spawner) start(cmd *exec.Cmd) (release func(), err error) {
	s.mu.Lock()
	if s.live == 0 {
		s.reqs = make(chan spawnRequest)
		go spawnLoop(s.reqs)
	}
	s.live++
	reqs := s.reqs
	s.mu.Unlock()
	r := spawnRequest{cmd: cmd, done: make(chan error, 1)}
	reqs <- r
	if err := <-r.done; err != nil {
		s.release()
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(s.release) }, nil
}

func (s *spawner) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.live--
	if s.live == 0 {
		close(s.reqs)
		s.reqs = nil
	}
}

// spawnLoop forks on its own thread. It never unlocks the thread: when the
// loop ends, every child it forked has been reaped, and the thread ends
// with the goroutine.
func spawnLoop(reqs <-chan spawnRequest) {
	runtime.LockOSThread()
	for r := range reqs {
		r.done <- r.cmd.Start()
	}
}
