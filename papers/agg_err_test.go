package papers

import (
	"errors"
	"fmt"
	"testing"
)

// TestCollectiveArgumentErrors checks that inputs no PE count can satisfy
// fail with ErrArgument on every PE that must know, and that the cluster is
// still in step afterwards (the Broadcast that follows each case pairs up).
func TestCollectiveArgumentErrors(t *testing.T) {
	const n = 3
	cases := []struct {
		name    string
		everyPE bool // else only PE 1 (the one given the bad argument) fails
		f       func(p *PE) error
	}{
		{"Broadcast root out of range", true, func(p *PE) error { _, err := Broadcast(p, n, uint32(1)); return err }},
		{"Broadcast negative root", true, func(p *PE) error { _, err := Broadcast(p, -1, 1.5); return err }},
		{"BroadcastBytes lengths differ", true, func(p *PE) error {
			return p.BroadcastBytes(0, make([]byte, 2+p.Self()/2))
		}},
		{"BroadcastSlice lengths differ on root", true, func(p *PE) error {
			l := 4
			if p.Self() == 2 {
				l = 5
			}
			return BroadcastSlice(p, 2, make([]float64, l))
		}},
		{"BitXor on float64", true, func(p *PE) error { _, err := Reduce(p, BitXor, 1.0); return err }},
		{"BitAnd scan on float32", true, func(p *PE) error { _, err := Scan(p, BitAnd, float32(1), Inclusive); return err }},
		{"unknown op", true, func(p *PE) error { _, err := Reduce(p, Op(42), int32(1)); return err }},
		{"unknown scan kind", true, func(p *PE) error { _, err := Scan(p, Sum, int32(1), ScanKind(4)); return err }},
		{"nil combine", true, func(p *PE) error { _, err := ReduceFunc[int64](p, 1, nil); return err }},
		{"Scatter input wrong length on root", true, func(p *PE) error {
			_, err := Scatter(p, 1, make([]int16, 2)) // only the root's counts
			return err
		}},
		{"Multicast source out of range on one PE", true, func(p *PE) error {
			from := (p.Self() + 1) % n
			if p.Self() == 1 {
				from = 7
			}
			_, err := Multicast(p, from, uint8(p.Self()))
			return err
		}},
		{"Gather out too short on one PE", false, func(p *PE) error {
			out := make([]uint64, n)
			if p.Self() == 1 {
				out = out[:1]
			}
			return Gather(p, uint64(p.Self()), out)
		}},
	}
	err := Emulate(n, Config{}, func(p *PE) error {
		for i, c := range cases {
			err := c.f(p)
			if c.everyPE || p.Self() == 1 {
				if !errors.Is(err, ErrArgument) {
					return fmt.Errorf("%s: got error %v, want one wrapping ErrArgument", c.name, err)
				}
			} else if err != nil {
				return fmt.Errorf("%s: %v", c.name, err)
			}
			got, err := Broadcast(p, i%n, uint32(1000+i))
			if err != nil || got != uint32(1000+i) {
				return fmt.Errorf("after %s: Broadcast got %d, %v: the cluster is out of step", c.name, got, err)
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
	err := Emulate(2, Config{}, func(p *PE) error {
		o := make([]int32, 2)
		in := []int32{5, 6}
		buf := make([]byte, 8)
		for _, c := range []struct {
			name string
			f    func()
		}{
			{"OR", func() { OR(p, uint32(3)) }},
			{"Broadcast", func() { Broadcast(p, 1, 2.5) }},
			{"BroadcastBytes", func() { p.BroadcastBytes(0, buf) }},
			{"Gather", func() { Gather(p, int32(1), o) }},
			{"Multicast", func() { Multicast(p, 1-p.Self(), uint16(3)) }},
			{"Scatter", func() { Scatter(p, 0, in) }},
			{"Reduce Sum", func() { Reduce(p, Sum, float32(1)) }},
			{"Reduce Max", func() { Reduce(p, Max, int64(-3)) }},
			{"Scan", func() { Scan(p, Product, int32(3), Exclusive|Backward) }},
			{"Scan BitAnd", func() { Scan(p, BitAnd, uint64(3), Backward) }},
			{"ReduceFunc", func() { ReduceFunc(p, uint8(1), func(a, b uint8) uint8 { return a - b }) }},
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
