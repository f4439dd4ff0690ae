// Package suggest finds the valid name closest to a mistyped one, so that
// an error about an unknown setting, option or provider can say "did you
// mean …?". It has no dependencies and keeps no state.
package suggest
