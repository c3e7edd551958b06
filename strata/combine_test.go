package strata

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// collect runs fn on n PEs and returns each PE's result.
func collect[T any](t *testing.T, n int, fn func(s *S) (T, error)) []T {
	t.Helper()
	out := make([]T, n)
	err := run(n, func(s *S) error {
		v, err := fn(s)
		out[s.Self()] = v
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// direct computes a combine the slow, obvious way.
func direct(op CombineOp, vals []int32, segs []Segment, pe int) int32 {
	f := func(a, b int32) int32 {
		switch op % 5 {
		case 1:
			return a | b
		case 2:
			return a ^ b
		case 4:
			return max(a, b)
		}
		return int32(uint32(a) + uint32(b))
	}
	id := int32(0)
	if op%5 == 4 {
		id = -1 << 31
	}
	acc := id
	switch op / 5 {
	case 2:
		for _, v := range vals {
			acc = f(acc, v)
		}
	case 0:
		// the segment pe is in starts at the last boundary at or before pe
		start := 0
		for i := pe; i >= 0; i-- {
			if segs[i] != NoBoundary {
				start = i
				break
			}
		}
		from := start
		if segs[start] == ArrayBoundary && start == pe && start > 0 {
			// receives the previous segment's value
			prev := 0
			for i := start - 1; i >= 0; i-- {
				if segs[i] != NoBoundary {
					prev = i
					break
				}
			}
			from = prev
		}
		for i := from; i < pe; i++ {
			acc = f(acc, vals[i])
		}
	case 1:
		n := len(vals)
		end := n - 1 // last PE of pe's backward segment
		for i := pe + 1; i < n; i++ {
			if segs[i] != NoBoundary {
				end = i - 1
				break
			}
		}
		to := end
		if end == pe && pe+1 < n && segs[pe+1] == ArrayBoundary {
			to = n - 1
			for i := pe + 2; i < n; i++ {
				if segs[i] != NoBoundary {
					to = i - 1
					break
				}
			}
		}
		for i := to; i > pe; i-- {
			acc = f(acc, vals[i])
		}
	}
	return acc
}

func TestCombineOpsRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 3, 5, 8} {
		vals := make([]int32, n)
		segs := make([]Segment, n)
		for i := range vals {
			vals[i] = int32(r.Uint32())
			segs[i] = Segment(r.IntN(3))
			if r.IntN(2) == 0 {
				segs[i] = NoBoundary
			}
		}
		got := collect(t, n, func(s *S) ([]int32, error) {
			s.SetSegment(segs[s.Self()])
			out := make([]int32, numCombineOps)
			for op := range numCombineOps {
				v, err := s.CombineInt(vals[s.Self()], op)
				if err != nil {
					return nil, err
				}
				out[op] = v
			}
			return out, nil
		})
		for pe := range n {
			for op := range numCombineOps {
				if want := direct(op, vals, segs, pe); got[pe][op] != want {
					t.Errorf("n=%d segs=%v PE %d %v: got %d, want %d", n, segs, pe, op, got[pe][op], want)
				}
			}
		}
	}
}

func TestCombineVector(t *testing.T) {
	const n, m = 4, 5
	got := collect(t, n, func(s *S) ([]int32, error) {
		from := make([]int32, m)
		for i := range from {
			from[i] = int32(10*s.Self() + i)
		}
		to := make([]int32, m)
		err := s.CombineVector(to, from, ReduceAdd)
		return to, err
	})
	for pe := range n {
		for i := range m {
			if want := int32(10*(0+1+2+3) + 4*i); got[pe][i] != want {
				t.Errorf("PE %d [%d] = %d, want %d", pe, i, got[pe][i], want)
			}
		}
	}
}

func TestSplitPhaseCombineVector(t *testing.T) {
	const n, m = 3, 4
	vals := func(pe, i int) int32 { return int32((pe*7+i*3)%5 - 2) }
	got := collect(t, n, func(s *S) ([]int32, error) {
		from := make([]int32, m)
		for i := range from {
			from[i] = vals(s.Self(), i)
		}
		to := make([]int32, m)
		if err := s.StartCombineVector(to, from, BackScanMax); err != nil {
			return nil, err
		}
		clear(from) // read at Start: changing it now must not matter
		for {
			done, err := s.QueryCombineVector()
			if err != nil {
				return nil, err
			}
			if done {
				break
			}
		}
		return to, s.CompleteCombineVector()
	})
	for pe := range n {
		for i := range m {
			col := make([]int32, n)
			for q := range n {
				col[q] = vals(q, i)
			}
			if want := direct(BackScanMax, col, make([]Segment, n), pe); got[pe][i] != want {
				t.Errorf("PE %d [%d] = %d, want %d", pe, i, got[pe][i], want)
			}
		}
	}
}

func TestResetCurrentCycle(t *testing.T) {
	err := run(2, func(s *S) error {
		for s.CurrentCycle64() < 1e6 { // let a millisecond pass
		}
		if err := s.ResetCurrentCycle(); err != nil {
			return err
		}
		if c, c64 := uint64(s.CurrentCycle()), s.CurrentCycle64(); c >= c64 {
			return fmt.Errorf("after ResetCurrentCycle: CurrentCycle %d, CurrentCycle64 %d; want the first smaller", c, c64)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
