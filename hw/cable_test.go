package hw

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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

// TestCableTable reads the cable's wiring table in docs/board.md and checks
// every row against the 16- and 32-PE netlists, for every PE: the header
// pin, the DB-25 pin the ribbon takes it to, the line lpt names on that
// pin, and the net the header pin is on.
func TestCableTable(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "board.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(doc), "<!-- cable table -->\n")
	table, _, ok := strings.Cut(table, "<!-- end cable table -->")
	if !ok {
		t.Fatal("docs/board.md has no cable table between its markers")
	}
	rows := strings.Split(strings.TrimSpace(table), "\n")[2:] // the header and its rule
	if len(rows) != 26 {
		t.Fatalf("the cable table has %d rows, want one per wire, 26", len(rows))
	}
	boards := []*Netlist{MustNew(16), MustNew(32)}
	for i, row := range rows {
		f := strings.Split(strings.Trim(row, "| "), " | ")
		if len(f) != 4 {
			t.Fatalf("cable table row %q: want 4 columns", row)
		}
		wire, err := strconv.Atoi(f[0])
		if err != nil || wire != i+1 {
			t.Fatalf("cable table row %d: wire %q, want %d", i+1, f[0], i+1)
		}
		db, err := strconv.Atoi(f[1])
		if err != nil { // the wire no DB-25 pin takes
			for n := 1; n <= 25; n++ {
				if RibbonPin(n) == wire {
					t.Errorf("wire %d: the table says cut, DB-25 pin %d is on it", wire, n)
				}
			}
			db = 0
		} else if RibbonPin(db) != wire {
			t.Errorf("wire %d: the table says DB-25 pin %d, which is on header pin %d", wire, db, RibbonPin(db))
		}
		line := "—"
		if l, ok := lpt.LineByPin(db); ok {
			line = l.Name
		} else if slices.Contains(lpt.GroundPins[:], db) {
			line = "ground"
		}
		if f[2] != line {
			t.Errorf("wire %d: the table says line %s, DB-25 pin %d is %s", wire, f[2], db, line)
		}
		for _, b := range boards {
			for k := 0; k < b.PEs; k++ {
				node := Node{ConnectorRef(k), wire}
				if db > 0 && b.PortNode(k, db) != node {
					t.Errorf("%d PEs, PE %d: DB-25 pin %d on %v, the table says header pin %d", b.PEs, k, db, b.PortNode(k, db), wire)
				}
				want := strings.NewReplacer("PEk", fmt.Sprintf("PE%d", k), "Gg", fmt.Sprintf("G%d", k/4)).Replace(f[3])
				got := "—"
				if n := b.NetOf(node); n != nil {
					got = n.Name
				}
				if got != want {
					t.Errorf("%d PEs, PE %d: header pin %d on net %s, the table says %s", b.PEs, k, wire, got, want)
				}
			}
		}
	}
}
