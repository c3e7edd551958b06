package emu_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/peset"
)

// startStates are the ways a run can find the board: each power-up state
// of the two 74LS74 halves, and the both-high state — every PE transparent
// (0xcf) holds the barrier half with preset and clear both low, Q and nQ
// both high — left as a previous program's PEs close (data 0). (A PE that
// starts while the others are still transparent fails check-in naming
// them, by design: a transparent PE takes no part.)
func startStates() []struct {
	name        string
	up          emu.PowerUp
	transparent bool
} {
	var s []struct {
		name        string
		up          emu.PowerUp
		transparent bool
	}
	for _, st := range emu.AllFlipFlops {
		s = append(s, struct {
			name        string
			up          emu.PowerUp
			transparent bool
		}{st.String(), emu.PowerUp{State: &st}, false})
	}
	for _, st := range emu.AllFlipFlops[:2] {
		s = append(s, struct {
			name        string
			up          emu.PowerUp
			transparent bool
		}{st.String() + "+transparent", emu.PowerUp{State: &st}, true})
	}
	return s
}

// TestCheckInFromEveryPowerUp: from every power-up state, with one PE
// starting late, check-in succeeds, barriers and votes keep every PE in
// step, and an interrupt reaches every PE with its code.
func TestCheckInFromEveryPowerUp(t *testing.T) {
	for _, n := range []int{2, 4, 5} {
		for _, st := range startStates() {
			t.Run(fmt.Sprintf("pes=%d/%s", n, st.name), func(t *testing.T) {
				b, err := emu.New(n, st.up)
				if err != nil {
					t.Fatal(err)
				}
				if st.transparent {
					ps := make([]*emu.Port, n)
					for k := range ps {
						ps[k], _ = b.Port(k)
						ps[k].WriteData(lpt.Transparent)
					}
					s0, _ := b.NetLevel(hw.NetAllS0)
					s1, _ := b.NetLevel(hw.NetAllS1)
					if q, _ := b.NetLevel(hw.NetRDYQ); !q || s0 || s1 {
						t.Fatal("every PE transparent: preset and clear must both be low and RDYQ high")
					}
					for _, p := range ps {
						p.WriteData(0) // closed, as papers leaves a port
						p.Close()
					}
				}
				late := n - 1
				err = emulate.RunPorts(context.Background(), b, n, func(ctx context.Context, k int, port *emu.Port) error {
					if k == late {
						// Start late: the others wait at check-in.
						waitUntil(t, func() bool { return b.PortInfo(0).Data != 0 && b.PortInfo(0).Data != lpt.Transparent })
					}
					p, err := papers.Open(port, papers.Config{PE: k, PEs: n, Context: ctx, Timeout: 5 * time.Second})
					if err != nil {
						return err
					}
					defer p.Close()
					return inStep(p)
				})
				if err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// inStep runs votes, NANDs and an interrupt and checks that every PE sees
// the same results.
func inStep(p *papers.PE) error {
	n := p.PEs()
	for r := 0; r < 20; r++ {
		mask, err := p.Vote((r+p.Self())%2 == 0)
		if err != nil {
			return err
		}
		var want peset.Set
		for k := 0; k < n; k++ {
			if (r+k)%2 == 0 {
				want |= 1 << k
			}
		}
		if mask != want {
			return fmt.Errorf("round %d: vote %b, want %b", r, mask, want)
		}
	}
	const code = 0x9
	if p.Self() == 0 {
		got, err := p.Interrupt(code)
		if err != nil || got != code {
			return fmt.Errorf("interrupt: code %#x, %v", got, err)
		}
	} else {
		for {
			err := p.Barrier()
			var ie *papers.InterruptError
			if errors.As(err, &ie) {
				if ie.Code != code {
					return fmt.Errorf("interrupt code %#x, want %#x", ie.Code, code)
				}
				break
			}
			if err != nil {
				return err
			}
		}
	}
	got, err := p.NAND(uint8(p.Self()))
	if err != nil {
		return err
	}
	want := uint8(0xf)
	for k := 0; k < n; k++ {
		want &= uint8(k)
	}
	if got != ^want&0xf {
		return fmt.Errorf("NAND after the interrupt %#x, want %#x", got, ^want&0xf)
	}
	return nil
}

func waitUntil(t *testing.T, cond func() bool) {
	deadline := time.Now().Add(10 * time.Second)
	for !cond() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
}

// TestPowerUpSeed: a seed gives the same sequence of power-up states on
// every board; Reset repeats the latest power-up, PowerCycle draws the
// next; a chosen state is every power-up's; both Q values of both halves
// come up over a few cycles.
func TestPowerUpSeed(t *testing.T) {
	seq := func(seed uint64) []emu.FlipFlops {
		b, err := emu.New(4, emu.PowerUp{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		var s []emu.FlipFlops
		for range 16 {
			_, st := b.PowerUp()
			b.Reset()
			if _, again := b.PowerUp(); again != st {
				t.Fatalf("Reset changed the power-up state from %v to %v", st, again)
			}
			if q, _ := b.NetLevel(hw.NetRDYQ); q != st.Ready {
				t.Fatalf("after a reset to %v, RDYQ is %v", st, q)
			}
			s = append(s, st)
			b.PowerCycle()
		}
		return s
	}
	a, b := seq(42), seq(42)
	if !slices.Equal(a, b) {
		t.Fatalf("seed 42 gave %v, then %v", a, b)
	}
	seen := map[emu.FlipFlops]bool{}
	for _, st := range a {
		seen[st] = true
	}
	if len(seen) != 4 {
		t.Errorf("16 power-ups from seed 42 gave only the states %v", seen)
	}
	if slices.Equal(a, seq(43)) {
		t.Errorf("seeds 42 and 43 gave the same sequence %v", a)
	}
	fixed := emu.FlipFlops{Ready: true, Interrupt: true}
	bd, _ := emu.New(8, emu.PowerUp{State: &fixed})
	for range 3 {
		if up, st := bd.PowerUp(); st != fixed || up.State == nil || *up.State != fixed {
			t.Fatalf("chosen power-up %v: got %v (%+v)", fixed, st, up)
		}
		// The interrupt half is cleared at once: every port's control
		// register reads 0 at power-on, which acknowledges.
		if q, _ := bd.NetLevel(hw.NetINTQ); !q {
			t.Fatal("power-on with the interrupt flag set: the acknowledge tree must clear it (nINTQ high)")
		}
		if q, _ := bd.NetLevel(hw.NetRDYQ); !q {
			t.Fatal("power-on with RDYQ set: nothing clears it before the PEs write")
		}
		bd.PowerCycle()
	}
}

// TestResetRegisters: Reset puts every port's registers back to 0 and the
// board settles from there, with faults kept.
func TestResetRegisters(t *testing.T) {
	b, _ := emu.New(4)
	ps := make([]*emu.Port, 4)
	for k := range ps {
		ps[k], _ = b.Port(k)
		ps[k].WriteData(lpt.S1 | 0xf)
		ps[k].WriteControl(lpt.NAK)
	}
	if q, _ := b.NetLevel(hw.NetRDYQ); !q {
		t.Fatal("every PE at S1: RDYQ must be high")
	}
	if err := b.Inject(emu.Fault{PE: 2, Kind: emu.Unplugged}); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	for k, p := range ps {
		if p.ReadData() != 0 || p.ReadControl() != 0 {
			t.Errorf("PE %d after Reset: data %#x control %#x, want 0 and 0", k, p.ReadData(), p.ReadControl())
		}
	}
	if q, _ := b.NetLevel(hw.NetRDYQ); q {
		t.Error("after Reset RDYQ must be the power-up state's (low)")
	}
	if got := ps[2].ReadStatus() & lpt.StatusPins; got != 0x78 {
		t.Errorf("the unplugged fault did not survive Reset: PE 2 reads %#x, want 0x78", got)
	}
}

// TestLevelsAgreeWithNetLevel: NetNames names every net of the hw netlist, and
// Levels agrees with NetLevel for each.
func TestLevelsAgreeWithNetLevel(t *testing.T) {
	b, _ := emu.New(8)
	p, _ := b.Port(3)
	p.WriteData(lpt.S1 | lpt.LG | 0x5)
	names := b.NetNames()
	var want []string
	for _, n := range b.Netlist().Nets {
		want = append(want, n.Name)
	}
	if !slices.Equal(names, want) {
		t.Fatalf("NetNames differs from the netlist's nets")
	}
	levels := b.Levels(make([]bool, 3))
	if len(levels) != len(names) {
		t.Fatalf("%d levels for %d nets", len(levels), len(names))
	}
	for i, name := range names {
		if v, err := b.NetLevel(name); err != nil || v != levels[i] {
			t.Errorf("net %s: Levels says %v, NetLevel %v (%v)", name, levels[i], v, err)
		}
	}
	if i := slices.Index(names, hw.CableNet(3, "D7")); i < 0 || !levels[i] {
		t.Errorf("PE3.D7 should be high after PE 3 wrote S1")
	}
	if _, err := b.NetLevel("nosuch"); err == nil {
		t.Error("NetLevel of an unknown net succeeded")
	}
}

// TestZeroAllocs: the operation paths of the emulated port allocate
// nothing: writes, reads, and a wait that returns at once.
func TestZeroAllocs(t *testing.T) {
	b, _ := emu.New(2)
	p, _ := b.Port(0)
	q, _ := b.Port(1)
	v := uint8(lpt.S1 | lpt.LG | 0xf)
	allocs := testing.AllocsPerRun(1000, func() {
		v ^= lpt.Strobes
		p.WriteData(v)
		q.WriteData(v)
		p.ReadStatus()
		p.WriteControl(lpt.NAK)
		p.Wait(^p.ReadStatus(), 0xff, time.Millisecond, nil) // returns at once
		_ = p.Err()
	})
	if allocs != 0 {
		t.Errorf("%v allocations per round of port operations", allocs)
	}
	// A wait that blocks until its timeout (its timer is made once).
	st := p.ReadStatus()
	p.Wait(st, 0xff, 100*time.Microsecond, nil)
	if allocs := testing.AllocsPerRun(20, func() { p.Wait(st, 0xff, 100*time.Microsecond, nil) }); allocs != 0 {
		t.Errorf("%v allocations per blocking wait", allocs)
	}
}
