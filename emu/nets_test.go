package emu_test

import (
	"slices"
	"testing"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// TestNetNamesAndLevels checks that NetNames lists every net of the hw
// netlist once and that Levels agrees with NetLevel net by net, before and
// after a write that moves the barrier flip-flop.
func TestNetNamesAndLevels(t *testing.T) {
	b, err := emu.New(4)
	if err != nil {
		t.Fatal(err)
	}
	names := b.NetNames()
	if len(names) != len(b.Netlist().Nets) {
		t.Fatalf("%d net names for %d nets", len(names), len(b.Netlist().Nets))
	}
	for i, n := range b.Netlist().Nets {
		if names[i] != n.Name {
			t.Fatalf("net %d is %q, the netlist says %q", i, names[i], n.Name)
		}
	}
	agree := func(when string) []bool {
		t.Helper()
		lv := b.Levels(make([]bool, 0, 3)) // too small: Levels must grow it
		if len(lv) != len(names) {
			t.Fatalf("%s: %d levels for %d nets", when, len(lv), len(names))
		}
		for i, n := range names {
			if v, err := b.NetLevel(n); err != nil || v != lv[i] {
				t.Fatalf("%s: net %s: Levels says %v, NetLevel %v (%v)", when, n, lv[i], v, err)
			}
		}
		return lv
	}
	before := slices.Clone(agree("at power-up"))
	for k := range 4 {
		p, err := b.Port(k)
		if err != nil {
			t.Fatal(err)
		}
		p.WriteData(lpt.S1 | lpt.DataMask)
	}
	after := agree("every PE at S1")
	rdy := slices.Index(names, "RDYQ")
	if !after[rdy] {
		t.Error("RDYQ low with every PE at S1")
	}
	if slices.Equal(before, after) {
		t.Error("Levels did not change when every PE wrote")
	}
}
