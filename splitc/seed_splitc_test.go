package splitc

// Libsplit-C §3.3 (Luna, Berkeley 1994; docs/seeds.md) as tests: the
// definition of each global communication function, row by row, quoting the
// report. Where this port differs — logical
// and/or/xor are bitwise here, reductions reach every PE, departed PEs are
// left out — the row says so and tests our choice.

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/papers"
)

// definitions are the seed's functions on the values 2, 1, 0, 3.
var definitions = []struct {
	seed string
	f    func(*papers.PE, int32) (int32, error)
	want []int32 // per PE
}{
	{`all_reduce_to_one_add: a_0 + … + a_n`, AllReduceToOneAdd[int32], []int32{6, 6, 6, 6}},
	{`all_reduce_to_one_mult: a_0 * … * a_n`, AllReduceToOneMult[int32], []int32{0, 0, 0, 0}},
	{`all_reduce_to_one_max`, AllReduceToOneMax[int32], []int32{3, 3, 3, 3}},
	{`all_reduce_to_one_min`, AllReduceToOneMin[int32], []int32{0, 0, 0, 0}},
	// "logical or": C's || of 2, 1, 0, 3 is 1. Ours is bitwise: 2|1|0|3.
	{`all_reduce_to_one_or ("logical or"; bitwise here: 2|1|0|3 = 3, where C's || gives 1)`, AllReduceToOneOr[int32], []int32{3, 3, 3, 3}},
	// "logical xor" of 2, 1, 0, 3 (three true values) is 1; bitwise 0.
	{`all_reduce_to_one_xor ("logical xor"; bitwise here: 2^1^0^3 = 0, where the logical xor of three trues is 1)`, AllReduceToOneXor[int32], []int32{0, 0, 0, 0}},
	// "logical and": 2 && 1 is 1; bitwise 2&1 = 0. (The 0 makes both 0.)
	{`all_reduce_to_one_and ("logical and"; bitwise here)`, AllReduceToOneAnd[int32], []int32{0, 0, 0, 0}},
	{`all_scan_add: processor i gets a_0 + … + a_i (inclusive)`, AllScanAdd[int32], []int32{2, 3, 3, 6}},
	{`all_scan_mult`, AllScanMult[int32], []int32{2, 2, 0, 0}},
	{`all_scan_max`, AllScanMax[int32], []int32{2, 2, 2, 3}},
	{`all_scan_min`, AllScanMin[int32], []int32{2, 1, 0, 0}},
	{`all_scan_or (bitwise)`, AllScanOr[int32], []int32{2, 3, 3, 3}},
	{`all_scan_xor (bitwise)`, AllScanXor[int32], []int32{2, 3, 3, 0}},
	{`all_scan_and (bitwise: 2&1 = 0, where 2 && 1 is 1)`, AllScanAnd[int32], []int32{2, 0, 0, 0}},
	{`all_bcast: "Broadcast sends a message from processor 0 to all other processors."`, AllBcast[int32], []int32{2, 2, 2, 2}},
}

// TestSeedDefinitions: "Reduce computes the following function for the
// operations: add, multiply, max, min, logical or, logical xor, and
// logical and. a_0 ⊕ … ⊕ a_i ⊕ … ⊕ a_n, where a_i is the argument from
// processor i"; "For a scan, processor i computes ... a_0 ⊕ … ⊕ a_i";
// "Broadcast sends a message from processor 0 to all other processors."
// Four PEs contribute 2, 1, 0, 3.
func TestSeedDefinitions(t *testing.T) {
	vals, rows := []int32{2, 1, 0, 3}, definitions
	got := make([][]int32, len(rows))
	for i := range got {
		got[i] = make([]int32, len(vals))
	}
	err := emulate.Run(len(vals), papers.Config{}, func(p *papers.PE) error {
		for i, r := range rows {
			v, err := r.f(p, vals[p.Self()])
			if err != nil {
				return fmt.Errorf("%s: %w", r.seed, err)
			}
			got[i][p.Self()] = v
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		if fmt.Sprint(got[i]) != fmt.Sprint(r.want) {
			t.Errorf("%s\n\tof %v: PEs got %v, want %v", r.seed, vals, got[i], r.want)
		}
	}
	// The logical forms, for a program that needs C's meaning: reduce the
	// truth values, 0 or 1 — then bitwise and logical agree.
	truth := func(v int32) int32 {
		if v != 0 {
			return 1
		}
		return 0
	}
	err = emulate.Run(len(vals), papers.Config{}, func(p *papers.PE) error {
		or, err := AllReduceToOneOr(p, truth(vals[p.Self()]))
		if err == nil && or != 1 {
			err = fmt.Errorf("logical or via truth values = %d, want 1", or)
		}
		return err
	})
	if err != nil {
		t.Error(err)
	}
}

// TestSeedBarrier: "Barrier synchronizes the processors by ensuring that no
// processors leaves the barrier until all have entered it."
func TestSeedBarrier(t *testing.T) {
	const n, rounds = 4, 200
	var entered [n]atomic.Int32
	err := emulate.Run(n, papers.Config{}, func(p *papers.PE) error {
		for r := int32(1); r <= rounds; r++ {
			entered[p.Self()].Store(r)
			if err := Barrier(p); err != nil {
				return err
			}
			for k := range entered {
				if entered[k].Load() < r {
					return fmt.Errorf("PE %d left barrier %d before PE %d entered it", p.Self(), r, k)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// "These functions require all the processors to participate (i.e. all
// processors must call the function)." Here every PE that takes part must
// call them; a PE that has left (papers.PE.Leave) is left out of every
// result — TestCollectivesWithDepartedPE.
