package kicad_test

import (
	"bytes"
	"slices"
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

// supplyShort are the boards whose copper does not yet meet the limits:
// their supply runs on 0.4 mm tracks, without a pour (issue 41). The test
// fails when one of them meets the limits, so that the list only shrinks.
var supplyShort = []string{"ttl_papers_8pe", "ttl_papers_16pe", "ttl_papers_32pe"}

// TestSupplyCheck runs the DC check on every routed board's committed
// copper, prints what the worst chip's supply comes to, and holds each
// board to the limits.
func TestSupplyCheck(t *testing.T) {
	for _, b := range kicad.Routed() {
		base := kicad.BaseOf(b)
		d, err := kicad.SupplyCheck(b, boardFile(t, base))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %v", base, d)
		meets := d.Input-d.Volts <= maxSupplyDrop && d.Rise <= maxGroundRise
		switch short := slices.Contains(supplyShort, base); {
		case short && meets:
			t.Errorf("%s now meets the DC limits: take it off supplyShort", base)
		case !short && !meets:
			t.Errorf("%s: %v: the limits are %.0f mV of drop and %.0f mV of ground rise", base, d, maxSupplyDrop*1000, maxGroundRise*1000)
		}
	}
}

// TestSupplyCheckMeasures narrows the 4-PE board's supply tracks from 0.4
// to 0.2 mm: a track's resistance doubles, so the drop at the worst chip
// in copper (all but the fuse's own resistance) must nearly double (the
// vias and pads, unchanged, keep it under 2; a track that overlaps a pad
// it passes only by its width loses that contact when narrowed, which can
// take it a little over).
func TestSupplyCheckMeasures(t *testing.T) {
	b := kicad.Routed()[0]
	src := boardFile(t, kicad.BaseOf(b))
	d, err := kicad.SupplyCheck(b, src)
	if err != nil {
		t.Fatal(err)
	}
	narrow, err := kicad.SupplyCheck(b, bytes.ReplaceAll(src, []byte("(width 0.4)"), []byte("(width 0.2)")))
	if err != nil {
		t.Fatal(err)
	}
	copper := func(d kicad.SupplyDrop) float64 { return d.Input - d.Volts - hw.PowerFuse(b.PEs).RMax*d.Current }
	if r := copper(narrow) / copper(d); r < 1.8 || r > 2.02 {
		t.Errorf("halving the supply tracks' width multiplied the drop by %.3f (%v, then %v), want nearly 2", r, d, narrow)
	}
	if r := narrow.Rise / d.Rise; r < 1.8 || r > 2.02 {
		t.Errorf("halving the supply tracks' width multiplied the ground rise by %.3f, want nearly 2", r)
	}
}
