//go:build race

package emu

// raceEnabled shortens the longest tests under the race detector, which
// slows them tenfold or more.
const raceEnabled = true
