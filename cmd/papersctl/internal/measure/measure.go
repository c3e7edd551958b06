// Package measure implements the timing method of docs/measurement.md (after the
// Active Messages measurements): time a loop of operations per repetition,
// subtract the empty loop's cost, discard the first repetition, drop
// repetitions more than 3× the mean (a context switch or a descheduled
// goroutine), and keep repeating until the 90% confidence interval of the
// mean is within a tolerance of the mean, or a time cap runs out.
//
// A Sampler keeps the repetitions and says when to stop; a Loop runs
// them on every PE of a program, which must agree on when to stop.
package measure

import (
	"context"
	"math"
	"time"

	"github.com/ttlpapers/ttlpapers/papers"
)

// Sampler collects repetitions of one measurement.
type Sampler struct {
	perRep    int           // operations per repetition
	overhead  time.Duration // empty-loop cost of one repetition
	tolerance float64       // CI half-width / mean to stop at
	minReps   int
	deadline  time.Time
	first     bool
	reps      []float64 // ns per operation, overhead subtracted
}

// New returns a Sampler for repetitions of perRep operations whose empty
// loop costs overhead; it is Done when the 90% CI is within tolerance of the
// mean (0.1 for the method's 10%) with at least 5 kept repetitions, or after
// maxTime (but never before 2 repetitions are kept).
func New(perRep int, overhead time.Duration, tolerance float64, maxTime time.Duration) *Sampler {
	return &Sampler{perRep: perRep, overhead: overhead, tolerance: tolerance, minReps: 5,
		deadline: time.Now().Add(maxTime), first: true}
}

// Add records one repetition that took d.
func (s *Sampler) Add(d time.Duration) {
	if s.first { // the first repetition warms caches and the scheduler
		s.first = false
		return
	}
	s.reps = append(s.reps, float64(max(d-s.overhead, 0))/float64(s.perRep))
}

// Done reports whether the measurement has converged or run out of time.
func (s *Sampler) Done() bool {
	r := s.Result()
	if r.Kept < 2 { // no interval yet, even past the cap
		return false
	}
	return r.Kept >= s.minReps && r.CI90 <= s.tolerance*r.Mean || time.Now().After(s.deadline)
}

// Result is a measurement's outcome.
type Result struct {
	Mean    float64 // ns per operation
	CI90    float64 // half-width of the 90% confidence interval, ns
	Kept    int     // repetitions used
	Dropped int     // repetitions dropped as > 3× the mean
}

// Converged reports whether the CI is within tol of the mean.
func (r Result) Converged(tol float64) bool { return r.Kept >= 2 && r.CI90 <= tol*r.Mean }

// Result computes the mean and its 90% confidence interval over the kept
// repetitions.
func (s *Sampler) Result() Result {
	all := mean(s.reps)
	var kept []float64
	for _, x := range s.reps {
		if x <= 3*all {
			kept = append(kept, x)
		}
	}
	r := Result{Mean: mean(kept), Kept: len(kept), Dropped: len(s.reps) - len(kept)}
	if len(kept) >= 2 {
		var ss float64
		for _, x := range kept {
			ss += (x - r.Mean) * (x - r.Mean)
		}
		sd := math.Sqrt(ss / float64(len(kept)-1))
		r.CI90 = t90(len(kept)-1) * sd / math.Sqrt(float64(len(kept)))
	}
	return r
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// t90 is Student's t for a two-sided 90% interval with df degrees of
// freedom (the normal 1.645 beyond the table).
func t90(df int) float64 {
	table := [...]float64{6.314, 2.920, 2.353, 2.132, 2.015, 1.943, 1.895, 1.860, 1.833, 1.812,
		1.796, 1.782, 1.771, 1.761, 1.753, 1.746, 1.740, 1.734, 1.729, 1.725}
	if df >= 1 && df <= len(table) {
		return table[df-1]
	}
	return 1.645
}

// LoopOverhead returns the cost of a loop of n calls to an empty function
// plus the timer reads around it (the minimum of a few tries), to subtract
// from every repetition of n operations.
func LoopOverhead(n int) time.Duration {
	empty := func() error { return nil }
	best := time.Duration(math.MaxInt64)
	for range 5 {
		start := time.Now()
		for range n {
			if err := empty(); err != nil {
				panic(err)
			}
		}
		best = min(best, time.Since(start))
	}
	return best
}

// Loop is a measurement taken on every PE of a program together, by the
// method above: each repetition starts with the PEs lined up, PE 0 feeds
// its time to a Sampler and decides when to stop, and tells the others
// with an ANY outside the timed part, so that every PE runs the same
// repetitions.
type Loop struct {
	PerRep    int           // operations per repetition
	Overhead  time.Duration // what PE 0's empty repetition costs (LoopOverhead), subtracted
	Tolerance float64       // stop when the 90% CI is within this fraction of the mean
	MaxTime   time.Duration // or when this time is up
	// LineUp lines the PEs up before each repetition: p.Barrier when nil.
	LineUp func() error
}

// Run repeats rep, this PE's part of one repetition, which returns how
// long PE 0's timed part took (other PEs' durations are not used), until
// PE 0's Sampler is done or ctx is cancelled (the repetitions so far are
// kept). The Result is PE 0's; other PEs get the zero Result.
func (l Loop) Run(ctx context.Context, p *papers.PE, rep func() (time.Duration, error)) (Result, error) {
	lineUp := l.LineUp
	if lineUp == nil {
		lineUp = p.Barrier
	}
	var smp *Sampler
	if p.Self() == 0 {
		smp = New(l.PerRep, l.Overhead, l.Tolerance, l.MaxTime)
	}
	for {
		if err := lineUp(); err != nil {
			return Result{}, err
		}
		d, err := rep()
		if err != nil {
			return Result{}, err
		}
		done := false
		if smp != nil {
			smp.Add(d)
			done = smp.Done() || ctx.Err() != nil
		}
		if done, err = p.Any(done); err != nil {
			return Result{}, err
		}
		if done {
			if smp == nil {
				return Result{}, nil
			}
			return smp.Result(), nil
		}
	}
}

// Repeat makes a repetition of k calls of op, timed.
func Repeat(k int, op func() error) func() (time.Duration, error) {
	return func() (time.Duration, error) {
		start := time.Now()
		for range k {
			if err := op(); err != nil {
				return 0, err
			}
		}
		return time.Since(start), nil
	}
}
