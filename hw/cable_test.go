package hw

import (
	"testing"

	"github.com/ttlpapers/ttlpapers/lpt"
)

// TestRibbonPinout checks the IDC-26 headers of the boards beyond 8 PEs
// against lpt's DB-25 table, as the common ("AT") bracket cable wires them:
// a flat ribbon crimped onto a DB-25 IDC plug, whose contacts take the
// wires in the order 1, 14, 2, 15, …, 13, and onto a 2×13 IDC socket,
// which takes wire k on pin k.
func TestRibbonPinout(t *testing.T) {
	used := map[int]int{}
	for wire := 1; wire <= 25; wire++ {
		db := (wire + 1) / 2 // odd wires: the DB-25's top row, pins 1-13
		if wire%2 == 0 {
			db = 13 + wire/2 // even wires: its bottom row, pins 14-25
		}
		if got := RibbonPin(db); got != wire {
			t.Errorf("DB-25 pin %d: header pin %d, want %d (ribbon wire %d)", db, got, wire, wire)
		}
		used[RibbonPin(db)]++
	}
	if len(used) != 25 || used[26] != 0 {
		t.Errorf("DB-25 pins on header pins %v, want each of 1-25 once and 26 free", used)
	}
	// The lines by name, as a builder checks a cable with a meter: the
	// header's odd row carries nStrobe, D0-D7, nAck, Busy, PaperOut and
	// Select; its even row nAutoFd, nError, nInit, nSelectIn and the
	// grounds.
	want := map[string]int{"nStrobe": 1, "D0": 3, "D7": 17, "nAck": 19, "Busy": 21, "PaperOut": 23, "Select": 25,
		"nAutoFd": 2, "nError": 4, "nInit": 6, "nSelectIn": 8}
	for _, n := range []int{16, 32} {
		b := MustNew(n)
		for k := 0; k < n; k++ {
			if c := b.Component(ConnectorRef(k)); c.Part != IDC26 {
				t.Fatalf("%d PEs: %s is a %s, want an IDC26 header", n, c.Ref, c.Part.Name)
			}
		}
		for name, pin := range want {
			l, err := lpt.LineByName(name)
			if err != nil {
				t.Fatal(err)
			}
			if got := b.PortNode(3, l.Pin); got != (Node{"J4", pin}) {
				t.Errorf("%d PEs: PE 3's %v is on %v, want J4 pin %d", n, l, got, pin)
			}
		}
		for i, p := range lpt.GroundPins {
			if nd := b.PortNode(3, p); nd.Pin != 10+2*i || b.NetOf(nd).Name != GND {
				t.Errorf("%d PEs: ground (DB-25 pin %d) on %v, net %v; want header pin %d on GND", n, p, nd, b.NetOf(nd), 10+2*i)
			}
		}
		if net := b.NetOf(Node{"J4", 26}); net != nil {
			t.Errorf("%d PEs: header pin 26 (no DB-25 pin) on net %s", n, net.Name)
		}
	}
	if got := MustNew(8).PortNode(3, 8); got != (Node{"J4", 8}) {
		t.Errorf("8 PEs: PE 3's D6 on %v, want J4 pin 8 of its DB-25", got)
	}
}
