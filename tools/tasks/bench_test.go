package tasks_test

import (
	"context"
	"testing"

	"github.com/dshd/dshd/tools/tasks"
)

// BenchmarkNotices_NoneAtAModelCall is what the agent pays before each
// model call when no task settled: one atomic load, no lock, no
// allocation.
func BenchmarkNotices_NoneAtAModelCall(b *testing.B) {
	s := tasks.New(tasks.Options{})
	defer s.Close(tasks.StateInterrupted)
	b.ReportAllocs()
	for b.Loop() {
		if s.TakeNotices() != nil {
			b.Fatal("a notice")
		}
	}
}

// instant is a job that ends at once.
type instant struct{}

func (instant) Run(context.Context, *tasks.Output) tasks.Outcome {
	return tasks.Outcome{State: tasks.StateCompleted, Result: "done"}
}

// BenchmarkNotices_SettleToTheNextModelCall is a task's whole path from
// its start to its notice in the next model call: the start, its run
// goroutine, the settle (state, notice, record) and TakeNotices. The
// settle is seen through the journal hook, which runs once the notice is
// pending.
func BenchmarkNotices_SettleToTheNextModelCall(b *testing.B) {
	settled := make(chan struct{}, 1)
	s := tasks.New(tasks.Options{MaxRunning: 1 << 20, Record: func(kind string, data any) error {
		if kind == tasks.RecordTask {
			select {
			case settled <- struct{}{}:
			default:
			}
		}
		return nil
	}})
	defer s.Close(tasks.StateInterrupted)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Start(tasks.Spec{Kind: tasks.KindCommand, Title: "x"}, instant{}); err != nil {
			b.Fatal(err)
		}
		for {
			<-settled // the start record, then the settle record
			if ns := s.TakeNotices(); len(ns) == 1 {
				break
			}
		}
	}
}
