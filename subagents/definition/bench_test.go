package definition_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dshd/dshd/internal/testkit"
	"github.com/dshd/dshd/subagents/definition"
)

// writeHundred writes 100 definitions of a realistic size into the
// workspace ws, each with its own output schema when schemas is set.
func writeHundred(b *testing.B, ws string, schemas bool) {
	writeHundredRound(b, ws, schemas, 0)
}

// writeHundredRound is writeHundred with schemas that differ by round, so
// no schema was seen in an earlier round.
func writeHundredRound(b *testing.B, ws string, schemas bool, round int) {
	dir := filepath.Join(ws, ".dshd", "agents")
	for i := range 100 {
		schema := ""
		if schemas {
			schema = fmt.Sprintf(`outputSchema:
  type: object
  required: [summary]
  properties:
    summary: {type: string}
    finding_%d_%d: {type: array, items: {type: string}}
`, i, round)
		}
		testkit.Write(b, dir, fmt.Sprintf("agent-%03d.md", i), fmt.Sprintf(`---
description: Agent %d reviews one part of the code base and reports what it found.
tools: [read_file, grep, glob, list_dir]
disallowedTools: run_command
maxDepth: 1
maxTurns: 30
permissions: deny
%s---

You are reviewer %d. You work in {{cwd}} with {{model}}.

Read the code you are pointed at, find the bugs, and report them with file:line references.
`, i, schema, i))
	}
}

// BenchmarkOpen_HundredDefinitionsFirstSession is a session/new in a
// workspace with 100 definition files nobody read before: every file is
// read, parsed, checked and bound. Goal: under 5 ms.
func BenchmarkOpen_HundredDefinitionsFirstSession(b *testing.B) {
	b.Run("without schemas", func(b *testing.B) { benchFirstOpen(b, false) })
	b.Run("each with its own output schema", func(b *testing.B) { benchFirstOpen(b, true) })
}

func benchFirstOpen(b *testing.B, schemas bool) {
	d := newDaemon(b)
	ws := b.TempDir()
	writeHundred(b, ws, schemas)
	var cpu time.Duration
	round := 0
	for b.Loop() {
		b.StopTimer()
		round++
		writeHundredRound(b, ws, schemas, round) // nothing seen before
		b.StartTimer()
		lib := definition.New(definition.Options{Service: d.svc, Base: d.base})
		before := cpuTime()
		w, errs := lib.Open(ws)
		cpu += cpuTime() - before
		if len(errs) != 0 || len(w.Definitions()) != 100 {
			b.Fatal(errs)
		}
		b.StopTimer()
		w.Close()
		b.StartTimer()
	}
	// On a shared machine wall time includes waiting for a core; the CPU
	// time the process spent is the cost itself.
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N)/1000, "cpu-ms/op")
}

// BenchmarkOpen_HundredDefinitionsUnchanged is a session/new in a
// workspace whose definitions are already bound and unchanged: the files
// are only stat'ed, their stamps being mdfiles.Settle old (a newer one is
// read again, not parsed).
func BenchmarkOpen_HundredDefinitionsUnchanged(b *testing.B) {
	d := newDaemon(b)
	ws := b.TempDir()
	writeHundred(b, ws, true)
	ageFiles(b, filepath.Join(ws, ".dshd", "agents"), time.Hour)
	lib := definition.New(definition.Options{Service: d.svc, Base: d.base})
	held, _ := lib.Open(ws)
	defer held.Close()
	for b.Loop() {
		w, _ := lib.Open(ws)
		w.Close()
	}
}

// ageFiles sets the times of dir's files age back.
func ageFiles(b *testing.B, dir string, age time.Duration) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	old := time.Now().Add(-age)
	for _, e := range entries {
		if err := os.Chtimes(filepath.Join(dir, e.Name()), old, old); err != nil {
			b.Fatal(err)
		}
	}
}
