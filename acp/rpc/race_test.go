//go:build race

package rpc

// raceEnabled shrinks the few size-bound tests: the race detector slows
// byte-wise JSON scanning tenfold and finds races, not size bugs.
const raceEnabled = true
