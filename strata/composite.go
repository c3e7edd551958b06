package strata

import (
	"errors"
	"fmt"
	"slices"

	"github.com/ttlpapers/ttlpapers/papers"
)

// CompositeOp is a composite reduction (Strata's CompositeOp). Like every
// reduction it ignores segments; every PE gets the result.
type CompositeOp uint8

const (
	Min CompositeOp = iota
	Max
	Average  // the sum (with ReduceAdd's overflow, for integers) over the PE count
	Variance // the sample variance, over n-1; 0 with one PE; float32 precision
	Median   // the middle value; with an even count, the smaller middle one
)

func (op CompositeOp) String() string {
	switch op {
	case Min:
		return "Min"
	case Max:
		return "Max"
	case Average:
		return "Average"
	case Variance:
		return "Variance"
	case Median:
		return "Median"
	}
	return fmt.Sprintf("CompositeOp(%d)", uint8(op))
}

// CompositeInt applies a composite reduction to every PE's value (Strata's
// CompositeInt). Average truncates toward zero, like C's division.
func (s *S) CompositeInt(value int32, op CompositeOp) (int32, error) {
	return composite(s, value, op, "CompositeInt")
}

// CompositeUint is CompositeInt for unsigned values (Strata's
// CompositeUint).
func (s *S) CompositeUint(value uint32, op CompositeOp) (uint32, error) {
	return composite(s, value, op, "CompositeUint")
}

// CompositeFloat is CompositeInt for float32 values (Strata's
// CompositeFloat). Every PE gets the same bits: the board's reductions
// combine in PE order.
func (s *S) CompositeFloat(value float32, op CompositeOp) (float32, error) {
	return composite(s, value, op, "CompositeFloat")
}

// composite runs on the papers aggregate operations, over the PEs that take
// part: Min, Max and Average are reductions; Variance and Median gather
// every value (n values of 32 bits: 8n NANDs) and compute locally,
// identically on every PE.
func composite[T int32 | uint32 | float32](s *S, v T, op CompositeOp, name string) (T, error) {
	if err := s.check(name); err != nil {
		return 0, err
	}
	if op > Median {
		return 0, papers.Errorf("strata", s.self, "%s: unknown CompositeOp %d (use Min, Max, Average, Variance or Median)", name, uint8(op))
	}
	old := s.enter(StateCombine, LogCombine, name)
	defer s.leave(old)
	var r T
	var err error
	switch op {
	case Min:
		r, err = papers.Reduce(s.pe, papers.Min, v)
	case Max:
		r, err = papers.Reduce(s.pe, papers.Max, v)
	case Average:
		r, err = papers.Reduce(s.pe, papers.Sum, v)
		r /= T(s.pe.Participants().Len())
	default:
		var all []T
		if all, err = gatherParticipants(s.pe, v); err != nil {
			break
		}
		if op == Median {
			slices.Sort(all)
			r = all[(len(all)-1)/2]
			break
		}
		r = T(float32(sampleVariance(all)))
	}
	if err != nil {
		return 0, s.fail(name, err)
	}
	return r, s.restoreAsync(name)
}

// gatherParticipants returns the values of the PEs that take part, in PE
// order (papers.Gather names the others in an AbsentError and leaves their
// slots zero).
func gatherParticipants[T int32 | uint32 | float32](pe *papers.PE, v T) ([]T, error) {
	all := make([]T, pe.PEs())
	var absent *papers.AbsentError
	if err := papers.Gather(pe, v, all); err != nil && !errors.As(err, &absent) {
		return nil, err
	}
	vals := all[:0]
	for _, k := range pe.Participants().Members() {
		vals = append(vals, all[k])
	}
	return vals, nil
}

// sampleVariance is sum((x - mean)^2) / (n - 1), and 0 for one value.
//
// It makes two passes (the mean, then the squared deviations), where the
// Strata manual (§5, "Composite Reductions") says the one-pass form
// (sum(x^2) - sum(x)^2/n) / (n - 1) "is the one actually used". That form
// suited the CM-5, whose control network added Σx and Σx² without a node
// seeing the others' values; it cancels catastrophically when the values
// are large beside their spread (2e9..2e9+3 gives 0, not 5/3, even in
// float64). Here every value is gathered anyway — the board's sums are
// gathers — so the accurate form costs no board operation
// (docs/strata.md, "Variance: two passes, not the manual's formula").
func sampleVariance[T int32 | uint32 | float32](xs []T) float64 {
	if len(xs) < 2 {
		return 0
	}
	var mean float64
	for _, x := range xs {
		mean += float64(x)
	}
	mean /= float64(len(xs))
	var ss float64
	for _, x := range xs {
		d := float64(x) - mean
		ss += d * d
	}
	return ss / float64(len(xs)-1)
}
