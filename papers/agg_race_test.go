//go:build race

package papers_test

const raceEnabled = true
