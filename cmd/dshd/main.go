// Command dshd is an ACP agent daemon: editors launch it on stdio, scripts
// drive it with JSON-RPC or `dshd prompt`, and other dshd daemons chain it
// as a subagent. See the README for the commands and settings.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
