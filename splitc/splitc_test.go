package splitc

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/papers"
)

type collective[T Number] struct {
	name   string
	f      func(*papers.PE, T) (T, error)
	op     func(a, b T) T
	reduce bool
}

func arith[T Number]() []collective[T] {
	add := func(a, b T) T { return a + b }
	mul := func(a, b T) T { return a * b }
	hi := func(a, b T) T { return max(a, b) }
	lo := func(a, b T) T { return min(a, b) }
	return []collective[T]{
		{"all_reduce_to_one_add", AllReduceToOneAdd[T], add, true},
		{"all_reduce_to_one_mult", AllReduceToOneMult[T], mul, true},
		{"all_reduce_to_one_max", AllReduceToOneMax[T], hi, true},
		{"all_reduce_to_one_min", AllReduceToOneMin[T], lo, true},
		{"all_scan_add", AllScanAdd[T], add, false},
		{"all_scan_mult", AllScanMult[T], mul, false},
		{"all_scan_max", AllScanMax[T], hi, false},
		{"all_scan_min", AllScanMin[T], lo, false},
	}
}

func bitwise[T Integer]() []collective[T] {
	return append(arith[T](),
		collective[T]{"all_reduce_to_one_or", AllReduceToOneOr[T], func(a, b T) T { return a | b }, true},
		collective[T]{"all_reduce_to_one_xor", AllReduceToOneXor[T], func(a, b T) T { return a ^ b }, true},
		collective[T]{"all_reduce_to_one_and", AllReduceToOneAnd[T], func(a, b T) T { return a & b }, true},
		collective[T]{"all_scan_or", AllScanOr[T], func(a, b T) T { return a | b }, false},
		collective[T]{"all_scan_xor", AllScanXor[T], func(a, b T) T { return a ^ b }, false},
		collective[T]{"all_scan_and", AllScanAnd[T], func(a, b T) T { return a & b }, false},
	)
}

// check runs every collective on vals (PE i contributes vals[i]) and
// compares each PE's result with a left fold, in PE order, over the PEs
// that take part; all_bcast from a departed PE 0 must name it.
func check[T Number](p *papers.PE, cs []collective[T], vals []T) error {
	me, members := p.Self(), p.Participants().Members()
	for _, c := range cs {
		got, err := c.f(p, vals[me])
		if err != nil {
			return err
		}
		want, started := T(0), false
		for _, k := range members {
			if !c.reduce && k > me {
				break
			}
			if started {
				want = c.op(want, vals[k])
			} else {
				want, started = vals[k], true
			}
		}
		if got != want {
			return fmt.Errorf("%s %T on %v over PEs %v: got %v, want %v", c.name, got, vals, members, got, want)
		}
	}
	got, err := AllBcast(p, vals[me])
	var absent *papers.AbsentError
	switch {
	case members[0] != 0:
		if !errors.As(err, &absent) || absent.Missing != 1 {
			return fmt.Errorf("all_bcast %T with PE 0 departed: %v, want an AbsentError naming PE 0", got, err)
		}
	case err != nil:
		return err
	case got != vals[0]:
		return fmt.Errorf("all_bcast %T: got %v, want PE 0's %v", got, got, vals[0])
	}
	return nil
}

// values draws every PE's inputs of the four Split-C types.
func values(n int) (ints []int32, uints []uint32, floats []float32, doubles []float64) {
	r := rand.New(rand.NewPCG(uint64(n), 7))
	ints, uints, floats, doubles = make([]int32, n), make([]uint32, n), make([]float32, n), make([]float64, n)
	for i := range n {
		ints[i] = int32(r.Uint32())
		uints[i] = r.Uint32()
		// small multiples of 1/2 keep sums and products exact, so a
		// fold in PE order is the only right answer
		floats[i] = float32(r.IntN(8)-3) / 2
		doubles[i] = float64(r.IntN(8)-3) / 2
	}
	return
}

func TestCollectives(t *testing.T) {
	for n := 2; n <= 16; n++ {
		ints, uints, floats, doubles := values(n)
		err := emulate.Run(n, papers.Config{}, func(p *papers.PE) error {
			if MYPROC(p) != p.Self() || PROCS(p) != n {
				return fmt.Errorf("MYPROC %d PROCS %d", MYPROC(p), PROCS(p))
			}
			if err := Barrier(p); err != nil {
				return err
			}
			// Every PE count checks one of the four types in turn (and 4
			// PEs all of them), so that each type meets a spread of PE
			// counts while the test stays short.
			var err error
			if n%4 == 0 || n == 4 {
				err = check(p, bitwise[int32](), ints)
			}
			if err == nil && (n%4 == 1 || n == 4) {
				err = check(p, bitwise[uint32](), uints)
			}
			if err == nil && (n%4 == 2 || n == 4) {
				err = check(p, arith[float32](), floats)
			}
			if err == nil && (n%4 == 3 || n == 4) {
				err = check(p, arith[float64](), doubles)
			}
			return err
		})
		if err != nil {
			t.Fatalf("%d PEs: %v", n, err)
		}
	}
}

// TestCollectivesWithDepartedPE: after a PE leaves (papers.PE.Leave,
// announced by an interrupt every other PE meets in a barrier), every
// collective combines the PEs that take part, and all_bcast from a departed
// PE 0 names it instead of broadcasting zero.
func TestCollectivesWithDepartedPE(t *testing.T) {
	const n = 4
	ints, uints, floats, doubles := values(n)
	for _, gone := range []int{0, 2} {
		err := emulate.Run(n, papers.Config{Timeout: 10 * time.Second}, func(p *papers.PE) error {
			if p.Self() == gone {
				return p.Leave()
			}
			for err := Barrier(p); ; err = Barrier(p) {
				var ie *papers.InterruptError
				if errors.As(err, &ie) {
					break
				}
				if err != nil {
					return err
				}
			}
			err := check(p, bitwise[int32](), ints)
			if err == nil {
				err = check(p, bitwise[uint32](), uints)
			}
			if err == nil {
				err = check(p, arith[float32](), floats)
			}
			if err == nil {
				err = check(p, arith[float64](), doubles)
			}
			return err
		})
		if err != nil {
			t.Errorf("PE %d departed: %v", gone, err)
		}
	}
}
