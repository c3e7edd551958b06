package papers_test

// SPIDER (Birsan, UBC 1995; docs/seeds.md) as tests: its programmable
// combine agents — user code that merges data byte by byte and counts the agents it has
// merged — and its fault-injection runs that report what was delivered, on
// TTL_PAPERS (docs/aggregates.md, "Contributor counts (SPIDER)"). Each row
// quotes the thesis.

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/peset"
)

// agent is a tree-combine agent's body (§5.2.1, Figure 5.2): a counter of
// the agents merged into it ("LABEL counter DATA 0x1": initially 1) and the
// data it carries.
type agent struct {
	count int32
	data  [8]byte
}

// merge is the agent program's combine: "Add combine counters" and "Merge
// data byte by byte ... OR".
func merge(a, b agent) agent {
	a.count += b.count
	for i := range a.data {
		a.data[i] |= b.data[i]
	}
	return a
}

// TestSpiderCombine: §5.3.1.2's experiment, "a combine-OR" where "The
// combine operation ⊕ is bitwise OR, and y_i = i", on Table 5.5's mesh
// sizes that fit a board (2 x 2, 4 x 4, 5 x 5 nodes) — as a built-in
// reduction, and as the agent's own program over a struct.
func TestSpiderCombine(t *testing.T) {
	for _, mesh := range [][2]int{{2, 2}, {4, 4}, {5, 5}} {
		n := mesh[0] * mesh[1]
		want := uint32(0)
		for i := range n {
			want |= uint32(i)
		}
		err := emulate.Run(n, papers.Config{}, func(p *papers.PE) error {
			y := uint32(p.Self())
			or, c, err := papers.ReduceCount(p, papers.BitOr, y)
			if err != nil {
				return err
			}
			if or != want || !c.Complete() || c.String() != fmt.Sprintf("%d/%d", n, n) {
				return fmt.Errorf("combine-OR of y_i = i: %#x, count %v; want %#x, %d/%d", or, c, want, n, n)
			}
			// "When the total count coincides with the number of nodes in
			// the combine the data is passed to the application."
			var a agent
			a.count = 1
			for k := range a.data {
				a.data[k] = byte(y >> (8 * (k % 4)))
			}
			got, c, err := papers.ReduceFuncCount(p, a, merge)
			if err != nil {
				return err
			}
			if got.count != int32(c.Delivered) || c.Delivered != n || got.data[0] != byte(want) || got.data[1] != byte(want>>8) {
				return fmt.Errorf("agent combine: count %d, data %x; delivered %v; want count %d and the OR %#x", got.count, got.data, c, n, want)
			}
			return nil
		})
		if err != nil {
			t.Errorf("%dx%d mesh: %v", mesh[0], mesh[1], err)
		}
	}
}

// TestSpiderCombineIsInPEOrder: SPIDER's agents merge "whenever the
// opportunity arises", in any order, so their combine must be commutative;
// here a programmable combine runs in PE order on every PE, so it need not
// be, and every PE gets the same bits.
func TestSpiderCombineIsInPEOrder(t *testing.T) {
	const n = 5
	type step struct {
		trace [n]byte // which PEs were folded in, in order
		len   int32
	}
	fold := func(a, b step) step {
		for i := range b.len {
			a.trace[a.len+i] = b.trace[i]
		}
		a.len += b.len
		return a
	}
	err := emulate.Run(n, papers.Config{}, func(p *papers.PE) error {
		mine := step{len: 1}
		mine.trace[0] = byte('a' + p.Self())
		all, err := papers.ReduceFunc(p, mine, fold)
		if err != nil {
			return err
		}
		prefix, err := papers.ScanFunc(p, mine, fold, step{}, papers.Backward)
		if err != nil {
			return err
		}
		if string(all.trace[:all.len]) != "abcde" {
			return fmt.Errorf("ReduceFunc folded %q, want PE order abcde", all.trace[:all.len])
		}
		if want := "edcba"[:n-p.Self()]; string(prefix.trace[:prefix.len]) != want {
			return fmt.Errorf("backward ScanFunc folded %q, want %q", prefix.trace[:prefix.len], want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSpiderFaultInjection: §5.4.2 "As shown by the arrows in Figure 5.7,
// 1000 agents were sent between two nodes, first in a network without
// faults (upper figure), and then in a network with faults (lower
// figure)... All 1000 agents did arrive at the destination." Here 1000
// counted combines run first with every PE, then after PE 2 has left and
// PE 3's cable has been pulled (a fault nothing announces): every combine
// reports what was delivered, and combines exactly that.
func TestSpiderFaultInjection(t *testing.T) {
	const n, left, pulled = 4, 2, 3
	rounds := 1000
	if testing.Short() || raceEnabled {
		rounds = 100
	}
	b, err := emu.New(n)
	if err != nil {
		t.Fatal(err)
	}
	idle, unplugged := make(chan struct{}), make(chan struct{})
	err = emulate.RunOn(b, n, papers.Config{Timeout: 10 * time.Second}, func(p *papers.PE) error {
		if err := combines(p, rounds, 0, "without faults"); err != nil {
			return err
		}
		switch p.Self() {
		case left:
			return p.Leave()
		case pulled:
			if _, err := untilInterrupt(p); err != nil {
				return err
			}
			close(idle) // quiet: its cable can go
			<-unplugged
			return nil
		case 0:
			if _, err := untilInterrupt(p); err != nil {
				return err
			}
			<-idle
			if err := b.Inject(emu.Fault{PE: pulled, Kind: emu.Unplugged}); err != nil {
				return err
			}
			close(unplugged)
		default:
			if _, err := untilInterrupt(p); err != nil {
				return err
			}
			<-unplugged
		}
		return combines(p, rounds, 1<<left|1<<pulled, "with PE 2 departed and PE 3 unplugged")
	})
	// The counts said who was missing, but the run must not end as proved:
	// its end's census names the unplugged PE on the PEs left.
	var ae *papers.AbsentError
	if !errors.As(err, &ae) || ae.Missing != 1<<pulled || ae.Why != "participant" {
		t.Fatalf("run: %v; want the end of the run to name PE %d absent", err, pulled)
	}
}

// combines runs rounds counted combines and checks each: delivered/total
// as missing says, the OR and the product of the delivered PEs' values.
func combines(p *papers.PE, rounds int, missing peset.Set, what string) error {
	n := p.PEs()
	var or, product uint8
	product = 1
	for k := range n {
		if !missing.Has(k) {
			or |= uint8(1 << k)
			product *= uint8(k + 2)
		}
	}
	want := fmt.Sprintf("%d/%d", n-missing.Len(), n)
	if missing != 0 {
		want += fmt.Sprintf(" (PEs %d, %d missing)", missing.Members()[0], missing.Members()[1])
	}
	for i := range rounds {
		got, c, err := papers.ReduceCount(p, papers.BitOr, uint8(1<<p.Self()))
		if err != nil {
			return err
		}
		if got != or || c.String() != want || c.Missing != missing {
			return fmt.Errorf("%s, combine %d: OR %04b delivered %v; want %04b, %s", what, i, got, c, or, want)
		}
	}
	// A gather-based reduction: a PE the board does not hear from would
	// read as zero (making the product 0); the counted form leaves it out.
	got, c, err := papers.ReduceCount(p, papers.Product, uint8(p.Self()+2))
	if err != nil || got != product || c.String() != want {
		return fmt.Errorf("%s: product %d delivered %v (%v); want %d, %s", what, got, c, err, product, want)
	}
	return nil
}
