package kicad_test

import (
	"github.com/ttlpapers/ttlpapers/internal/testenv"
	"math"
	"testing"

	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/hw/kicad"
)

// TestPowerFuseSized holds each board's input fuse to the rule
// docs/board.md gives: it carries the most the board draws half again,
// and its R1max at that current costs at most 100 mV of the DC check's
// 150; and the DC check counts it, on the net from the terminal.
func TestPowerFuseSized(t *testing.T) {
	testenv.SlowUnderRace(t, "the DC check of every board's filled pours")
	for _, b := range kicad.Routed() {
		if b.Net(hw.NetVIn) == nil {
			continue // the Pi adapter, fed by the Pi
		}
		base := kicad.BaseOf(b)
		d, err := kicad.SupplyCheck(b, boardFile(t, base))
		if err != nil {
			t.Fatal(err)
		}
		f := hw.PowerFuse(b.PEs)
		if f.Hold < 1.5*d.Current {
			t.Errorf("%s: fuse %s holds %.2f A, under 1.5 times the %.0f mA drawn", base, f.MPN, f.Hold, d.Current*1000)
		}
		if r := f.RMax * d.Current; r > 0.100 {
			t.Errorf("%s: fuse %s costs %.0f mV at %.0f mA, over 100 mV", base, f.MPN, r*1000, d.Current*1000)
		}
		if d.FuseRef != "F1" || d.Fuse < f.RMax*d.Current {
			t.Errorf("%s: the DC check counts %.1f mV in fuse %q, want at least F1's R1max times %.0f mA", base, d.Fuse*1000, d.FuseRef, d.Current*1000)
		}
	}
}

// TestSupplyCheckCountsFuse raises the 4-PE board's fuse resistance by
// 0.1 Ω: the worst chip's supply must fall by 0.1 Ω times the current,
// and its ground not move.
func TestSupplyCheckCountsFuse(t *testing.T) {
	testenv.SlowUnderRace(t, "the DC check of the 4-PE board's pours, twice")
	b := kicad.Routed()[0]
	src := boardFile(t, kicad.BaseOf(b))
	d, err := kicad.SupplyCheck(b, src)
	if err != nil {
		t.Fatal(err)
	}
	f := hw.PowerFuse(b.PEs)
	defer func(r float64) { f.RMax = r }(f.RMax)
	f.RMax += 0.1
	more, err := kicad.SupplyCheck(b, src)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.Volts-more.Volts, 0.1*d.Current; math.Abs(got-want) > 1e-9 {
		t.Errorf("0.1 Ω more in the fuse lowered the worst chip by %.3f mV, want %.3f mV (%v, then %v)", got*1000, want*1000, d, more)
	}
	if more.Rise != d.Rise {
		t.Errorf("the fuse moved the ground rise from %v to %v", d.Rise, more.Rise)
	}
}
