//go:build race

package papers

const raceEnabled = true
