package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
)

func main() {
	var o options
	flag.StringVar(&o.version, "version", "", "release version, MAJOR.MINOR.PATCH (default: the entry's)")
	flag.StringVar(&o.out, "out", "dist", "directory the archives, SHA256SUMS, agent.json and icon.svg go to")
	flag.StringVar(&o.entry, "entry", "registry/dshd/agent.json", "the repository's registry entry; its icon.svg is beside it")
	flag.StringVar(&o.baseURL, "base-url", "https://github.com/dshd/dshd/releases/download/v{version}", "where the archives are published; {version} is replaced")
	flag.StringVar(&o.only, "only", "", "build only these platforms (comma-separated registry names, e.g. linux-x86_64)")
	flag.BoolVar(&o.vet, "vet", false, "type-check the module for every platform instead of building")
	flag.StringVar(&o.goCmd, "go", "go", "the go command")
	flag.Parse()
	o.mtime = sourceDate()
	o.log = os.Stderr
	var err error
	if o.vet {
		err = vetAll(&o)
	} else {
		err = release(&o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

// sourceDate is the time archive entries carry: SOURCE_DATE_EPOCH
// (reproducible-builds.org), else the Unix epoch, so that an archive's
// bytes never depend on when it was built.
func sourceDate() int64 {
	if v, err := strconv.ParseInt(strings.TrimSpace(os.Getenv("SOURCE_DATE_EPOCH")), 10, 64); err == nil && v > 0 {
		return v
	}
	return 0
}
