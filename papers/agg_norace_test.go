//go:build !race

package papers_test

const raceEnabled = false
