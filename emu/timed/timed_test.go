package timed

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// powerUpOf reads the flip-flop states of an untimed board, in the order of
// a timed board's FlipFlops, from the nets their outputs drive.
func powerUpOf(t *testing.T, u *emu.Board, tb *Board) []bool {
	t.Helper()
	lv := u.Levels(nil)
	var q []bool
	for _, g := range tb.ffs {
		gt := tb.gates[g]
		if gt.out >= 0 {
			q = append(q, lv[tb.drvNet[gt.out]])
		} else {
			q = append(q, !lv[tb.drvNet[gt.outN]])
		}
	}
	return q
}

// unpredictable reports whether PE k writing v would release the barrier
// flip-flop's preset and clear at the same instant: every PE at S0=S1=1 and
// k dropping both. The 74LS74 sheet calls the outcome unpredictable, and a
// zero-delay simulator decides it by evaluation order, so the differential
// test leaves it out.
func unpredictable(data []uint8, k int, v uint8) bool {
	if v&lpt.Strobes != 0 {
		return false
	}
	for _, d := range data {
		if d&lpt.Strobes != lpt.Strobes {
			return false
		}
	}
	return true
}

// TestTimedZeroDelayMatchesUntimed drives an untimed board and a timed one
// with no delays and ideal cables through the same random port operations,
// and requires every net and every PE's status to agree after each.
func TestTimedZeroDelayMatchesUntimed(t *testing.T) {
	for _, pes := range []int{1, 4, 6, 16} {
		u, err := emu.New(pes)
		if err != nil {
			t.Fatal(err)
		}
		probe, err := New(Config{PEs: pes, Delays: NoDelay})
		if err != nil {
			t.Fatal(err)
		}
		tb, err := New(Config{PEs: pes, Delays: NoDelay, PowerUp: powerUpOf(t, u, probe)})
		if err != nil {
			t.Fatal(err)
		}
		ports := make([]*emu.Port, pes)
		for k := range ports {
			if ports[k], err = u.Port(k); err != nil {
				t.Fatal(err)
			}
		}
		rng := rand.New(rand.NewPCG(uint64(pes), 7))
		data, control := make([]uint8, pes), make([]uint8, pes)
		now := time.Duration(0)
		for op := range 3000 {
			k := rng.IntN(pes)
			what := ""
			switch rng.IntN(3) {
			case 0:
				v := uint8(rng.IntN(256))
				if unpredictable(data, k, v) {
					continue
				}
				data[k] = v
				ports[k].WriteData(v)
				tb.write(k, v, control[k])
				what = "data"
			case 1:
				v := uint8(rng.IntN(16))
				control[k] = v
				ports[k].WriteControl(v)
				tb.write(k, data[k], v)
				what = "control"
			default:
				what = "read"
			}
			now += time.Nanosecond
			tb.runUntil(now)
			if diff := differ(u, tb, ports); diff != "" {
				t.Fatalf("%d PEs, op %d (PE %d %s): %s", pes, op, k, what, diff)
			}
		}
	}
}

// differ says where an untimed and a timed board disagree: a net, or a
// PE's status.
func differ(u *emu.Board, tb *Board, ports []*emu.Port) string {
	want, got := u.Levels(nil), tb.Levels(nil)
	for i, n := range u.NetNames() {
		if want[i] != got[i] {
			return fmt.Sprintf("net %s is %v untimed, %v timed", n, want[i], got[i])
		}
	}
	for j, p := range ports {
		if s, ts := p.ReadStatus(), tb.status(j); s != ts {
			return fmt.Sprintf("PE %d reads status %#02x untimed, %#02x timed", j, s, ts)
		}
	}
	return ""
}

// arrival returns when PE k's status input for line name changes next,
// stepping the board until it does.
func arrival(t *testing.T, b *Board, k int, name string) time.Duration {
	t.Helper()
	l, err := lpt.LineByName(name)
	if err != nil {
		t.Fatal(err)
	}
	i := k*len(lpt.Lines) + lineIndex(l)
	was := b.pcIn[i].cur
	for len(b.q.ev) > 0 {
		b.step()
		if b.pcIn[i].cur != was {
			return b.now
		}
	}
	t.Fatalf("PE %d's %s never changed", k, name)
	return 0
}

// TestTimedPathDelays checks the two paths of the seed's race on a 4-PE
// board with 10-foot cables at typical delays: the last PE flips its
// strobes and its data bit 0 at once, and the new ready flag and the new
// NAND bit reach a PC after exactly the sum of the datasheet delays and
// the cable model's — the data later, as its 74LS40 drives four cables.
func TestTimedPathDelays(t *testing.T) {
	b, err := New(Config{PEs: 4, Cable: Cable{Metres: []float64{TenFeet}}, PowerUp: []bool{true, false}})
	if err != nil {
		t.Fatal(err)
	}
	s1 := uint8(lpt.S1 | lpt.DataMask)
	for k := range 4 {
		b.write(k, s1, lpt.NAK)
	}
	for k := range 3 {
		b.write(k, s1^lpt.Strobes, lpt.NAK)
	}
	b.runQuiet()
	b.now += time.Microsecond
	start := b.now
	b.write(3, (s1^lpt.Strobes)&^lpt.D0, lpt.NAK)
	w := DefaultWire
	in := perMetre(w.Propagation, TenFeet) + perMetre(w.Edge, TenFeet)/2
	ready := in + hw.LS20.Delay.Typ + hw.LS74.Delay.Typ + hw.LS125.Delay.Typ + perMetre(w.Propagation, TenFeet) + perMetre(w.Edge, TenFeet)/2
	data := in + hw.LS40.Delay.Typ + perMetre(w.Propagation, TenFeet) + perMetre(w.Edge, 4*TenFeet)/2
	if got := arrival(t, b, 0, "Busy") - start; got != ready {
		t.Errorf("ready reached PE 0 after %v, want %v", got, ready)
	}
	if got := arrival(t, b, 0, "nError") - start; got != data {
		t.Errorf("NAND bit 0 reached PE 0 after %v, want %v", got, data)
	}
	if data-ready < 50*time.Nanosecond {
		t.Errorf("data %v after ready: the slow 74LS40 edges should make it lose the race by far", data-ready)
	}
}

// TestTimedInertialDelay checks that a gate swallows a pulse shorter than
// its delay and passes a longer one: PE 0 drops data bit 0 for 5 ns, then
// for 40 ns, with the 74LS40 at its typical 12 ns.
func TestTimedInertialDelay(t *testing.T) {
	b, err := New(Config{PEs: 4, PowerUp: []bool{false, false}})
	if err != nil {
		t.Fatal(err)
	}
	all := uint8(lpt.S1 | lpt.DataMask)
	for k := range 4 {
		b.write(k, all, lpt.NAK)
	}
	b.runQuiet()
	i0 := slices.Index(b.NetNames(), "I0")
	for _, c := range []struct {
		width time.Duration
		seen  bool
	}{{5 * time.Nanosecond, false}, {40 * time.Nanosecond, true}} {
		b.now += time.Microsecond
		b.write(0, all&^lpt.D0, lpt.NAK)
		b.runUntil(b.now + c.width)
		b.write(0, all, lpt.NAK)
		seen := false
		for len(b.q.ev) > 0 {
			b.step()
			seen = seen || b.level[i0]
		}
		if seen != c.seen || b.level[i0] {
			t.Errorf("%v pulse on PE 0's D0: I0 pulsed %v, want %v (and low after, got %v)", c.width, seen, c.seen, b.level[i0])
		}
	}
}

// TestTimedPowerUp checks that power-up states can be chosen, and that
// random ones are reproducible from the seed and take both values.
func TestTimedPowerUp(t *testing.T) {
	for _, q := range []bool{false, true} {
		b, err := New(Config{PEs: 4, PowerUp: []bool{q, false}})
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := b.NetLevel("RDYQ"); v != q {
			t.Errorf("powered up with Q=%v, RDYQ reads %v", q, v)
		}
		if got := b.status(0)&lpt.RDY != 0; got == q { // Busy is inverted
			t.Errorf("powered up with Q=%v, status 0x80 reads %v", q, got)
		}
	}
	seen := map[bool]bool{}
	for seed := range uint64(16) {
		a, _ := New(Config{PEs: 4, Seed: seed})
		b, _ := New(Config{PEs: 4, Seed: seed})
		if !slices.Equal(a.PowerUpStates(), b.PowerUpStates()) {
			t.Fatalf("seed %d powered up as %v, then as %v", seed, a.PowerUpStates(), b.PowerUpStates())
		}
		seen[a.PowerUpStates()[0]] = true
	}
	if len(seen) != 2 {
		t.Errorf("16 seeds powered the barrier flip-flop up only as %v", seen)
	}
	if _, err := New(Config{PEs: 4, PowerUp: []bool{true}}); err == nil {
		t.Error("one power-up state for two flip-flops accepted")
	}
}
