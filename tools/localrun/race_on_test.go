//go:build race

package localrun

// raceEnabled is true when the race detector instruments the build; tests
// that move gigabytes move less then.
const raceEnabled = true
