// limits.go: what one connection may cost, whatever its peer does
// (design.md "Bounded"). The limits know nothing of the transport, so
// stdio, sockets and any later transport take the same struct.

package rpc

import (
	"time"

	"github.com/dshd/dshd/internal/settingnames"
)

// Limits bound the memory and time one connection can hold. A zero field
// takes the default named on it; a negative duration disables that timer.
// Each limit, when hit, is logged once per connection with the peer.
type Limits struct {
	// MaxLineSize caps one incoming message line in bytes once the
	// connection is trusted (default DefaultMaxLineSize). A longer line is
	// skipped without being buffered and answered -32600.
	MaxLineSize int
	// PreAuthMaxLineSize caps one line while a connection that must
	// authenticate has not (default 64 KiB). A longer line is answered
	// -32600 and closes the connection.
	PreAuthMaxLineSize int
	// HandshakeTimeout is how long a connection that must authenticate may
	// take to do so before it is closed (default 10 s).
	HandshakeTimeout time.Duration
	// MaxQueuedInput bounds the bytes of messages read but not yet handled
	// (each message counts its params and its id, and at least 1 KiB;
	// what else its line holds is not kept); beyond it the connection stops
	// reading until the dispatcher catches up (default 4 MiB). One message
	// larger than the bound is still read.
	MaxQueuedInput int
	// MaxQueuedOutput bounds the bytes of answers and notifications
	// waiting to be written to a slow reader. Beyond it writers wait and
	// the connection stops reading its peer's requests (default 4 MiB).
	MaxQueuedOutput int
	// WriteTimeout closes a connection whose peer has taken none of our
	// pending output for this long (default 60 s).
	WriteTimeout time.Duration
	// IdleTimeout closes a connection that has read no message, runs no
	// request and waits for no answer for this long (default: never).
	IdleTimeout time.Duration
	// MaxAuthFailures closes a connection after this many failed
	// authentications (default 3).
	MaxAuthFailures int
	// Settings name the limits in the logs of their hits (the daemon's
	// flags), so that an operator knows what to raise.
	Settings Settings
}

// Settings name each field of Limits where a log line says it was hit;
// an empty name stands for the field's own.
type Settings struct {
	MaxLineSize, PreAuthMaxLineSize, HandshakeTimeout, MaxQueuedInput string
	MaxQueuedOutput, WriteTimeout, IdleTimeout, MaxAuthFailures       string
}

// DefaultMaxLineSize is the default cap on one incoming line.
const DefaultMaxLineSize = 64 << 20

// Defaults of the other limits.
const (
	DefaultPreAuthMaxLineSize = 64 << 10
	DefaultHandshakeTimeout   = 10 * time.Second
	DefaultMaxQueuedInput     = 4 << 20
	DefaultMaxQueuedOutput    = 4 << 20
	DefaultWriteTimeout       = 60 * time.Second
	DefaultMaxAuthFailures    = 3
)

// queuedMessageCost is the least a queued incoming message counts against
// MaxQueuedInput: its bookkeeping, not only its params.
const queuedMessageCost = 1 << 10

// withDefaults fills the zero fields.
func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxLineSize, DefaultMaxLineSize)
	def(&l.PreAuthMaxLineSize, DefaultPreAuthMaxLineSize)
	def(&l.MaxQueuedInput, DefaultMaxQueuedInput)
	def(&l.MaxQueuedOutput, DefaultMaxQueuedOutput)
	def(&l.MaxAuthFailures, DefaultMaxAuthFailures)
	if l.HandshakeTimeout == 0 {
		l.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if l.WriteTimeout == 0 {
		l.WriteTimeout = DefaultWriteTimeout
	}
	l.PreAuthMaxLineSize = min(l.PreAuthMaxLineSize, l.MaxLineSize)
	settingnames.Fill(&l.Settings)
	return l
}
