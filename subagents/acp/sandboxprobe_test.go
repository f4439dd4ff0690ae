//go:build unix

package acpprovider_test

import (
	"net"
	"os"
	"strings"
	"time"
)

// sandboxProbe is the fake agent's touch and dial verbs: it creates each
// file itself ("PATH ok" or "PATH: error"), or connects to ADDR
// ("connected" or the error).
func sandboxProbe(verb, arg string) string {
	if verb == "dial" {
		c, err := net.DialTimeout("tcp", arg, 5*time.Second)
		if err != nil {
			return "dial: " + err.Error()
		}
		c.Close()
		return "connected"
	}
	var out []string
	for _, p := range strings.Fields(arg) {
		if err := os.WriteFile(p, []byte("written by the agent\n"), 0o644); err != nil {
			out = append(out, p+": "+err.Error())
		} else {
			out = append(out, p+" ok")
		}
	}
	return strings.Join(out, "\n")
}
