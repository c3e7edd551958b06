package kicad_test

import (
	"bytes"
	"github.com/ttlpapers/ttlpapers/internal/testenv"
	"testing"

	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/hw/kicad"
)

// The DC limits every board must meet, every chip at its maximum supply
// current and every LED lit: the supply at the worst chip at most 150 mV
// below the input's (4.85 V of 5.00 V, leaving 100 mV to a 5 % supply
// before the 74LS minimum of 4.75 V), and no chip's ground more than 50 mV
// above the input's (a sixth of a 74LS input's 0.3 V low-level margin).
const (
	maxSupplyDrop = 0.150
	maxGroundRise = 0.050
)

// TestSupplyCheck runs the DC check on every routed board's committed
// copper, prints what the worst chip's supply comes to, and holds each
// board to the limits.
func TestSupplyCheck(t *testing.T) {
	testenv.SlowUnderRace(t, "the DC check of every board's filled pours")
	for _, b := range kicad.Routed() {
		base := kicad.BaseOf(b)
		d, err := kicad.SupplyCheck(b, boardFile(t, base))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %v", base, d)
		if d.Input-d.Volts > maxSupplyDrop || d.Rise > maxGroundRise {
			t.Errorf("%s: %v: the limits are %.0f mV of drop and %.0f mV of ground rise", base, d, maxSupplyDrop*1000, maxGroundRise*1000)
		}
	}
}

// TestSupplyCheckMeasures takes the 4-PE board's pours' fills out, and
// the drop in copper (all but the fuse's own resistance) and the ground
// rise must grow: the pours carry the current. Then it narrows the supply
// tracks from 0.4 to 0.2 mm: a track's resistance doubles, so the drop in
// copper at the worst chip must nearly double (the vias and pads,
// unchanged, keep it under 2; a track that overlaps a pad it passes only
// by its width loses that contact when narrowed, which can take it a
// little over).
func TestSupplyCheckMeasures(t *testing.T) {
	testenv.SlowUnderRace(t, "the DC check of the 4-PE board's pours, three times")
	b := kicad.Routed()[0]
	filled := boardFile(t, kicad.BaseOf(b))
	poured, err := kicad.SupplyCheck(b, filled)
	if err != nil {
		t.Fatal(err)
	}
	src := kicad.Unfill(filled)
	d, err := kicad.SupplyCheck(b, src)
	if err != nil {
		t.Fatal(err)
	}
	copper := func(d kicad.SupplyDrop) float64 { return d.Input - d.Volts - hw.PowerFuse(b.PEs).RMax*d.Current }
	if copper(d) <= 2*copper(poured) || d.Rise <= 2*poured.Rise {
		t.Errorf("without its pours' fills the 4-PE board's supply is %v, with them %v: the pours should at least halve the drop and the rise", d, poured)
	}
	narrow, err := kicad.SupplyCheck(b, bytes.ReplaceAll(src, []byte("(width 0.4)"), []byte("(width 0.2)")))
	if err != nil {
		t.Fatal(err)
	}
	if r := copper(narrow) / copper(d); r < 1.8 || r > 2.02 {
		t.Errorf("halving the supply tracks' width multiplied the drop by %.3f (%v, then %v), want nearly 2", r, d, narrow)
	}
	if r := narrow.Rise / d.Rise; r < 1.8 || r > 2.02 {
		t.Errorf("halving the supply tracks' width multiplied the ground rise by %.3f, want nearly 2", r)
	}
}
