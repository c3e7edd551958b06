package splitc

import (
	"fmt"
	"math/rand/v2"
	"testing"

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
// compares each PE's result with a left fold in PE order.
func check[T Number](p *papers.PE, cs []collective[T], vals []T) error {
	me := p.Self()
	for _, c := range cs {
		got, err := c.f(p, vals[me])
		if err != nil {
			return err
		}
		last := len(vals) - 1
		if !c.reduce {
			last = me
		}
		want := vals[0]
		for i := 1; i <= last; i++ {
			want = c.op(want, vals[i])
		}
		if got != want {
			return fmt.Errorf("%s %T on %v: got %v, want %v", c.name, got, vals, got, want)
		}
	}
	got, err := AllBcast(p, vals[me])
	if err != nil {
		return err
	}
	if got != vals[0] {
		return fmt.Errorf("all_bcast %T: got %v, want PE 0's %v", got, got, vals[0])
	}
	return nil
}

func TestCollectives(t *testing.T) {
	for n := 2; n <= 16; n++ {
		r := rand.New(rand.NewPCG(uint64(n), 7))
		ints := make([]int32, n)
		uints := make([]uint32, n)
		floats := make([]float32, n)
		doubles := make([]float64, n)
		for i := range n {
			ints[i] = int32(r.Uint32())
			uints[i] = r.Uint32()
			// small multiples of 1/2 keep sums and products exact, so a
			// fold in PE order is the only right answer
			floats[i] = float32(r.IntN(8)-3) / 2
			doubles[i] = float64(r.IntN(8)-3) / 2
		}
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
