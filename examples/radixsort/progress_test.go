package main

import (
	"slices"
	"testing"
)

// TestProgress: the progress callback hears of every pass once, from PE 0.
func TestProgress(t *testing.T) {
	var passes []int
	cfg := Config{KeyBits: 8, DigitBits: 4, Progress: func(pass, n int) {
		if n != 2 {
			t.Errorf("pass %d of %d, want of 2", pass, n)
		}
		passes = append(passes, pass)
	}}
	if _, err := sortRun(2, 20, cfg, "", nil); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(passes, []int{1, 2}) {
		t.Errorf("passes reported %v, want 1 and 2 once each", passes)
	}
}
