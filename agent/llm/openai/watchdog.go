// The watchdog: one timer that cancels an attempt when a phase of it
// (the first byte, the first data event, idle, the tail) lasts too long.

package openai

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

type phase int32

const (
	phaseFirstByte phase = iota + 1
	phaseFirstToken
	phaseIdle
	phaseDone
)

func (p phase) err() error {
	switch p {
	case phaseFirstByte:
		return ErrFirstByteTimeout
	case phaseFirstToken:
		return ErrFirstTokenTimeout
	case phaseIdle:
		return ErrIdleTimeout
	default:
		return errDoneTimeout
	}
}

// watchdog cancels its attempt's context, with the phase's error as cause,
// when armed and not re-armed in time. Only data events re-arm it, so a
// server sending keep-alive comments alone still runs out of time.
type watchdog struct {
	cancel   context.CancelCauseFunc
	settings Settings
	timer    *time.Timer
	phase    atomic.Int32
	dur      atomic.Int64
	// said is the timeout an expiry reports: the phase's whole bound,
	// though it may have been armed with what was left of it.
	said atomic.Int64
}

func newWatchdog(cancel context.CancelCauseFunc, settings Settings) *watchdog {
	w := &watchdog{cancel: cancel, settings: settings}
	w.timer = time.AfterFunc(time.Hour, w.fire)
	w.timer.Stop()
	return w
}

func (w *watchdog) fire() {
	d := time.Duration(w.said.Load())
	p := phase(w.phase.Load())
	switch p {
	case phaseFirstByte:
		w.cancel(fmt.Errorf("%w for %s (%s sets it)", p.err(), d, w.settings.FirstByteTimeout))
	case phaseFirstToken:
		w.cancel(said(p.err(), d, w.settings.FirstTokenTimeout))
	case phaseIdle:
		w.cancel(said(p.err(), d, w.settings.IdleTimeout))
	default:
		// The tail: a call that runs out of it succeeds, so no
		// setting is named.
		w.cancel(fmt.Errorf("%w (%s)", p.err(), d))
	}
}

// arm starts phase p with d to run; d <= 0 leaves the phase unbounded.
func (w *watchdog) arm(d time.Duration, p phase) { w.armRest(d, d, p) }

// armRest starts phase p with d, the rest of its bound whole, to run.
func (w *watchdog) armRest(d, whole time.Duration, p phase) {
	w.timer.Stop()
	w.phase.Store(int32(p))
	w.dur.Store(int64(d))
	w.said.Store(int64(whole))
	if d > 0 {
		w.timer.Reset(d)
	}
}

// pause stops the clock while the consumer handles events.
func (w *watchdog) pause() { w.timer.Stop() }

// resume restarts the current phase from its full duration.
func (w *watchdog) resume() {
	if d := time.Duration(w.dur.Load()); d > 0 {
		w.timer.Reset(d)
	}
}

func (w *watchdog) stop() { w.timer.Stop() }
