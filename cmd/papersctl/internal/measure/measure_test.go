package measure

import (
	"math"
	"testing"
	"time"
)

func TestSamplerDiscardsFirstAndOutliers(t *testing.T) {
	s := New(10, 100*time.Nanosecond, 0.1, time.Hour)
	s.Add(time.Second) // first repetition: discarded
	for _, d := range []time.Duration{1100, 1100, 1300, 900, 1100, 1100, 100100} {
		s.Add(d) // 10 ops each, 100 ns overhead: 100, 100, 120, 80, 100, 100, 10000 ns/op
	}
	r := s.Result()
	if r.Kept != 6 || r.Dropped != 1 {
		t.Fatalf("kept %d dropped %d, want 6 and 1 (the >3× mean repetition)", r.Kept, r.Dropped)
	}
	if math.Abs(r.Mean-100) > 1e-9 {
		t.Errorf("mean %v ns/op, want 100", r.Mean)
	}
	// sd = sqrt(800/5) = 12.65; t(5) = 2.015; CI = 2.015*12.65/sqrt(6) = 10.41.
	if math.Abs(r.CI90-10.41) > 0.01 {
		t.Errorf("CI90 %v, want 10.41", r.CI90)
	}
	if s.Done() || r.Converged(0.1) {
		t.Errorf("converged with a CI of %.1f%%, want not within 10%%", 100*r.CI90/r.Mean)
	}
	if !r.Converged(0.11) {
		t.Errorf("not converged within 11%%")
	}
}

func TestSamplerTimeCapNeedsTwoRepetitions(t *testing.T) {
	s := New(1, 0, 0.01, 0)
	s.Add(5)
	s.Add(7)
	if s.Done() {
		t.Fatal("done with one kept repetition")
	}
	s.Add(30)
	if !s.Done() {
		t.Fatal("not done past the time cap with two repetitions kept")
	}
}
