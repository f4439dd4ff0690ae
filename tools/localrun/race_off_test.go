//go:build !race

package localrun

const raceEnabled = false
