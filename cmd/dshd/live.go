// This file implements the live line of `dshd prompt`: on a terminal, the
// last line of stderr says what the run is waiting for and for how long,
// redrawn in place; everything else written to stderr first clears it.
// Off a terminal it draws nothing, and writes pass straight through.

package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
	"unicode/utf8"
)

// liveTick is how often the live line's clock is redrawn.
const liveTick = time.Second

// liveWidth caps the line so that it fits a narrow terminal; a line that
// wrapped could not be cleared in place.
const liveWidth = 72

// liveLine is stderr for `dshd prompt`: an io.Writer for the logger and
// the headless client, and the one line that says what the run waits for.
type liveLine struct {
	w  io.Writer
	on bool // w is a terminal: the line is drawn

	mu    sync.Mutex
	what  string // what the run waits for; "" hides the line
	since time.Time
	shown bool // the line is on the screen
	now   func() time.Time

	stop chan struct{}
	done chan struct{}
}

// newLiveLine wraps w; the line is drawn only when w is a terminal.
func newLiveLine(w io.Writer) *liveLine {
	l := &liveLine{w: w, now: time.Now}
	if f, ok := w.(*os.File); ok {
		l.on = isTTY(f)
	}
	return l
}

// IsTerminal reports whether the line is drawn, so the logger colours
// its output as it would on the terminal itself.
func (l *liveLine) IsTerminal() bool { return l.on }

// Write clears the line, writes p and leaves the line to the next tick.
func (l *liveLine) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.clearLocked()
	return l.w.Write(p)
}

// before returns w (stdout) behind the line: each write to it first takes
// the line off the screen, which w may share.
func (l *liveLine) before(w io.Writer) io.Writer {
	if !l.on {
		return w
	}
	return writerFunc(func(p []byte) (int, error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.clearLocked()
		return w.Write(p)
	})
}

// writerFunc is an io.Writer made of a function.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

func (l *liveLine) clearLocked() {
	if l.shown {
		io.WriteString(l.w, "\r\x1b[K")
		l.shown = false
	}
}

// set says what the run now waits for and draws it; "" hides the line.
// The same wait said again keeps its clock.
func (l *liveLine) set(what string) {
	if !l.on {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if what == l.what {
		return
	}
	l.what, l.since = what, l.now()
	if what == "" {
		l.clearLocked()
		return
	}
	l.drawLocked()
}

func (l *liveLine) drawLocked() {
	if l.what == "" {
		return
	}
	text := fmt.Sprintf("⋯ %s · %s", l.what, l.now().Sub(l.since).Round(time.Second))
	if utf8.RuneCountInString(text) > liveWidth {
		r := []rune(text)
		text = string(r[:liveWidth-1]) + "…"
	}
	io.WriteString(l.w, "\r\x1b[K"+text)
	l.shown = true
}

// start runs the clock until close; it does nothing off a terminal.
func (l *liveLine) start() {
	if !l.on {
		return
	}
	l.stop, l.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(l.done)
		t := time.NewTicker(liveTick)
		defer t.Stop()
		for {
			select {
			case <-l.stop:
				return
			case <-t.C:
				l.mu.Lock()
				l.drawLocked()
				l.mu.Unlock()
			}
		}
	}()
}

// close stops the clock and clears the line.
func (l *liveLine) close() {
	if l.stop != nil {
		close(l.stop)
		<-l.done
		l.stop = nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.what = ""
	l.clearLocked()
}
