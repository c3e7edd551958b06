package papers_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/papers"
)

// argCase is a collective call with a bad argument on some PEs.
type argCase struct {
	name    string
	everyPE bool // else only PE 1 (the one given the bad argument) fails
	f       func(p *papers.PE) error
}

// argumentCases are TestCollectiveArgumentErrors' calls, on n PEs.
func argumentCases(n int) []argCase {
	return []argCase{
		{"papers.Broadcast root out of range", true, func(p *papers.PE) error { _, err := papers.Broadcast(p, n, uint32(1)); return err }},
		{"papers.Broadcast negative root", true, func(p *papers.PE) error { _, err := papers.Broadcast(p, -1, 1.5); return err }},
		{"BroadcastBytes lengths differ", true, func(p *papers.PE) error {
			return p.BroadcastBytes(0, make([]byte, 2+p.Self()/2))
		}},
		{"papers.BroadcastSlice lengths differ on root", true, func(p *papers.PE) error {
			l := 4
			if p.Self() == 2 {
				l = 5
			}
			return papers.BroadcastSlice(p, 2, make([]float64, l))
		}},
		{"papers.BitXor on float64", true, func(p *papers.PE) error { _, err := papers.Reduce(p, papers.BitXor, 1.0); return err }},
		{"papers.BitAnd scan on float32", true, func(p *papers.PE) error {
			_, err := papers.Scan(p, papers.BitAnd, float32(1), papers.Inclusive)
			return err
		}},
		{"unknown op", true, func(p *papers.PE) error { _, err := papers.Reduce(p, papers.Op(42), int32(1)); return err }},
		{"unknown scan kind", true, func(p *papers.PE) error {
			_, err := papers.Scan(p, papers.Sum, int32(1), papers.ScanKind(4))
			return err
		}},
		{"nil combine", true, func(p *papers.PE) error { _, err := papers.ReduceFunc[int64](p, 1, nil); return err }},
		{"ReduceFunc over a type with a pointer", true, func(p *papers.PE) error {
			type withName struct {
				ID   int32
				Name string
			}
			_, err := papers.ReduceFunc(p, withName{ID: 1, Name: "x"}, func(a, b withName) withName { return a })
			return err
		}},
		{"ScanFuncCount over a slice", true, func(p *papers.PE) error {
			_, _, err := papers.ScanFuncCount(p, []byte{1}, func(a, b []byte) []byte { return a }, nil, papers.Inclusive)
			return err
		}},
		{"ReduceCount bitwise op on float", true, func(p *papers.PE) error { _, _, err := papers.ReduceCount(p, papers.BitOr, 1.0); return err }},
		{"papers.Scatter input wrong length on root", true, func(p *papers.PE) error {
			_, err := papers.Scatter(p, 1, make([]int16, 2)) // only the root's counts
			return err
		}},
		{"papers.Multicast source out of range on one papers.PE", true, func(p *papers.PE) error {
			from := (p.Self() + 1) % n
			if p.Self() == 1 {
				from = 7
			}
			_, err := papers.Multicast(p, from, uint8(p.Self()))
			return err
		}},
		{"papers.Gather out too short on one papers.PE", false, func(p *papers.PE) error {
			out := make([]uint64, n)
			if p.Self() == 1 {
				out = out[:1]
			}
			return papers.Gather(p, uint64(p.Self()), out)
		}},
	}
}

// TestCollectiveArgumentErrors checks that inputs no PE count can satisfy
// fail with ErrArgument on every PE that must know, and that the cluster is
// still in step afterwards (the Broadcast that follows each case pairs up).
func TestCollectiveArgumentErrors(t *testing.T) {
	const n = 3
	cases := argumentCases(n)
	err := emulate.Run(n, papers.Config{}, func(p *papers.PE) error {
		for i, c := range cases {
			err := c.f(p)
			if c.everyPE || p.Self() == 1 {
				if !errors.Is(err, papers.ErrArgument) {
					return fmt.Errorf("%s: got error %v, want one wrapping papers.ErrArgument", c.name, err)
				}
			} else if err != nil {
				return fmt.Errorf("%s: %v", c.name, err)
			}
			got, err := papers.Broadcast(p, i%n, uint32(1000+i))
			if err != nil || got != uint32(1000+i) {
				return fmt.Errorf("after %s: papers.Broadcast got %d, %v: the cluster is out of step", c.name, got, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCollectivesAllocateNothing measures, inside one PE's loop while the
// others run the same loop, that scalar collectives do not allocate.
func TestCollectivesAllocateNothing(t *testing.T) {
	err := emulate.Run(2, papers.Config{}, func(p *papers.PE) error {
		o := make([]int32, 2)
		in := []int32{5, 6}
		buf := make([]byte, 8)
		block := [5]byte{1, 2, 3, 4, 5}
		for _, c := range []struct {
			name string
			f    func()
		}{
			{"papers.OR", func() { papers.OR(p, uint32(3)) }},
			{"papers.Broadcast", func() { papers.Broadcast(p, 1, 2.5) }},
			{"BroadcastBytes", func() { p.BroadcastBytes(0, buf) }},
			{"papers.Gather", func() { papers.Gather(p, int32(1), o) }},
			{"papers.Multicast", func() { papers.Multicast(p, 1-p.Self(), uint16(3)) }},
			{"papers.Scatter", func() { papers.Scatter(p, 0, in) }},
			{"papers.Reduce papers.Sum", func() { papers.Reduce(p, papers.Sum, float32(1)) }},
			{"papers.Reduce papers.Max", func() { papers.Reduce(p, papers.Max, int64(-3)) }},
			{"papers.Scan", func() { papers.Scan(p, papers.Product, int32(3), papers.Exclusive|papers.Backward) }},
			{"papers.Scan papers.BitAnd", func() { papers.Scan(p, papers.BitAnd, uint64(3), papers.Backward) }},
			{"papers.ReduceFunc", func() { papers.ReduceFunc(p, uint8(1), func(a, b uint8) uint8 { return a - b }) }},
			{"papers.ReduceFunc on a block", func() { papers.ReduceFunc(p, block, orBlocks) }},
			{"papers.ScanFunc on a struct", func() { papers.ScanFunc(p, pair{1, 2}, addPairs, pair{}, papers.Exclusive) }},
			{"papers.ReduceCount", func() { papers.ReduceCount(p, papers.Sum, int16(2)) }},
			{"papers.ScanFuncCount", func() { papers.ScanFuncCount(p, block, orBlocks, [5]byte{}, papers.Backward) }},
			{"SetLED", func() { p.SetLED(papers.LED(1 + len(o)%3)) }},
		} {
			if a := testing.AllocsPerRun(20, c.f); a != 0 {
				return fmt.Errorf("%s: %v allocations per run, want 0", c.name, a)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// orBlocks merges two byte blocks byte by byte, as SPIDER's tree-combine
// agent does.
func orBlocks(a, b [5]byte) [5]byte {
	for i := range a {
		a[i] |= b[i]
	}
	return a
}

// pair is a small struct for the programmable combines.
type pair struct {
	n   int32
	sum int64
}

func addPairs(a, b pair) pair { return pair{a.n + b.n, a.sum + b.sum} }
