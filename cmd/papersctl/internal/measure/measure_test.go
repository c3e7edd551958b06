package measure

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/papers"
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

// TestLoopKeepsPEsInStep: every PE runs the same repetitions, PE 0 stops
// them (here at the time cap) and has the result; a cancelled context ends
// the loop after the repetition under way.
func TestLoopKeepsPEsInStep(t *testing.T) {
	const n = 3
	for _, cancelled := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		if cancelled {
			cancel()
		}
		var reps [n]int
		var res [n]Result
		err := emulate.Run(n, papers.Config{}, func(p *papers.PE) error {
			l := Loop{PerRep: 1, Tolerance: 1e-9, MaxTime: 20 * time.Millisecond}
			r, err := l.Run(ctx, p, func() (time.Duration, error) {
				reps[p.Self()]++
				return time.Duration(100 + reps[p.Self()]%7), nil
			})
			res[p.Self()] = r
			return err
		})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if reps[1] != reps[0] || reps[2] != reps[0] || cancelled != (reps[0] == 1) || reps[0] < 1 {
			t.Errorf("cancelled %v: repetitions per PE %v, want the same on each, 1 if cancelled and 3 or more if not", cancelled, reps)
		}
		if res[0].Kept != reps[0]-1 || res[1] != (Result{}) || res[2] != (Result{}) {
			t.Errorf("cancelled %v: results %+v after %d repetitions: want PE 0's, with all but the first kept", cancelled, res, reps[0])
		}
	}
}
