package hil

import (
	"slices"
	"testing"
)

// TestStatus: the progress reports count machines booted and finished.
func TestStatus(t *testing.T) {
	var got []string
	s := &status{report: func(m string) { got = append(got, m) }, n: 2}
	s.show()
	s.add(&s.booted)
	s.add(&s.booted)
	s.add(&s.finished)
	want := []string{"2 machines: 0 booted, 0 finished", "2 machines: 1 booted, 0 finished", "2 machines: 2 booted, 0 finished", "2 machines: 2 booted, 1 finished"}
	if !slices.Equal(got, want) {
		t.Errorf("reports %q, want %q", got, want)
	}
	(&status{n: 1}).show() // no Progress: nothing to call
}
