package sandbox

import (
	"context"
	"fmt"
	"os"
	"time"
)

// parentMain is a dshd stand-in: it starts `sh` under a sandbox (with or
// without namespaces, as args[0] says), prints the helper's pid, and waits
// to be killed. The command's output is ours: it says when it is ready.
func parentMain(args []string) int {
	s, err := New(&Config{Mode: Off, NoNamespaces: len(args) > 0 && args[0] == "plain", Caches: []string{}})
	if err != nil {
		fmt.Println(err)
		return 1
	}
	c, err := s.Command(context.Background(), Spec{Argv: []string{"/bin/sh", "-c", "sleep 300 & sleep 300 & echo ready; wait"}, Env: os.Environ()})
	if err != nil {
		fmt.Println(err)
		return 1
	}
	c.Stdout = os.Stdout
	if err := c.Start(); err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Printf("helper %d\n", c.Process.Pid)
	for {
		time.Sleep(time.Hour)
	}
}
