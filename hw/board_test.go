package hw

import (
	"fmt"
	"testing"

	"github.com/ttlpapers/ttlpapers/lpt"
)

// The 4-PE board is exactly the eight chips of docs/circuit.md, "The four-PE board".
func TestFourPEBoard(t *testing.T) {
	b := MustNew(4)
	want := []*Part{LS20, LS20, LS74, LS125, LS126, LS40, LS40, LS244}
	for i, p := range want {
		ref := fmt.Sprintf("U%d", i+1)
		if c := b.Component(ref); c == nil || c.Part != p {
			t.Errorf("%s is %v, want %s", ref, c, p.Name)
		}
	}
	if c := b.Component("U9"); c != nil {
		t.Errorf("a 4-PE board has a ninth chip %s", c.Part.Name)
	}
	// Spot checks from docs/circuit.md.
	on := func(net string, nodes ...Node) {
		t.Helper()
		for _, n := range nodes {
			if got := b.NetOf(n); got == nil || got.Name != net {
				t.Errorf("%v on %v, want %s", n, got, net)
			}
		}
	}
	on(NetAllS0, Node{"U1", 6}, Node{"U3", 1})
	on(NetAllS1, Node{"U1", 8}, Node{"U3", 4})
	on(NetIRQAny, Node{"U2", 6}, Node{"U3", 11})
	on(NetAckAll, Node{"U2", 8}, Node{"U3", 13})
	on(NetRDYQ, Node{"U3", 5}, Node{"U4", 2}, Node{"U4", 5}, Node{"U4", 9}, Node{"U4", 12})
	on(NetINTQ, Node{"U3", 8}, Node{"U5", 2})
	on("PE0.D6", Node{"J1", 8}, Node{"U1", 1})
	on("PE3.D7", Node{"J4", 9}, Node{"U1", 13})
	on("PE0.Busy", Node{"J1", 11}, Node{"U4", 3}, Node{"U5", 3})
	on("PE0.nInit", Node{"J1", 16}, Node{"U4", 1}, Node{"U5", 1})
	on("I0", Node{"U6", 6}, Node{"J1", 15}, Node{"J2", 15}, Node{"J3", 15}, Node{"J4", 15})
	on("I3", Node{"U7", 8}, Node{"J4", 10})
	on(VCC, Node{"U1", 14}, Node{"U8", 20}, Node{"U3", 2}, Node{"U3", 3})
	on(GND, Node{"U1", 7}, Node{"U8", 10}, Node{"U8", 1}, Node{"U8", 19}, Node{"J1", 25})
	if n := b.NetOf(Node{"J1", 17}); n != nil {
		t.Errorf("nSelectIn (reserved) is on net %s", n.Name)
	}
}

// Every board size is electrically sane: each net has exactly one driver or
// only tri-state drivers, every gate input is connected, every chip powered.
func TestAllSizes(t *testing.T) {
	for _, n := range Sizes {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			b, err := New(n)
			if err != nil {
				t.Fatal(err)
			}
			for _, net := range b.Nets {
				var outs, tris, ins int
				for _, nd := range net.Nodes {
					c := b.Component(nd.Ref)
					pin, ok := c.Part.PinByNum(nd.Pin)
					if !ok {
						t.Fatalf("%v: %s has no pin %d", nd, c.Part.Name, nd.Pin)
					}
					switch pin.Type {
					case PinOutput:
						outs++
					case PinTriState:
						tris++
					case PinInput:
						ins++
					case PinNC:
						t.Errorf("net %s uses NC pin %v", net.Name, nd)
					}
				}
				switch net.Name {
				case VCC, GND:
					continue
				}
				if outs > 1 || outs == 1 && tris > 0 {
					t.Errorf("net %s has %d outputs and %d tri-state outputs", net.Name, outs, tris)
				}
			}
			for _, c := range b.Components {
				for _, pin := range c.Part.Pins {
					net := b.NetOf(Node{c.Ref, pin.Num})
					switch pin.Type {
					case PinInput, PinPower, PinGround:
						if net == nil {
							t.Errorf("%s pin %d (%s %s) is not connected", c.Ref, pin.Num, c.Part.Name, pin.Name)
						}
					}
					if pin.Type == PinPower && net.Name != VCC || pin.Type == PinGround && net.Name != GND {
						t.Errorf("%s pin %d on %s", c.Ref, pin.Num, net.Name)
					}
				}
			}
			// Every PE's cable carries its lines to the board.
			for k := 0; k < n; k++ {
				for _, l := range lpt.Lines {
					net := b.NetOf(b.PortNode(k, l.Pin))
					if (net == nil) != (l.Name == "nSelectIn") {
						t.Errorf("PE %d %v on net %v", k, l, net)
					}
				}
			}
		})
	}
}

func TestSizes(t *testing.T) {
	for pes, want := range map[int]int{1: 4, 4: 4, 5: 8, 9: 16, 32: 32} {
		if got, err := SizeFor(pes); err != nil || got != want {
			t.Errorf("SizeFor(%d) = %d, %v; want %d", pes, got, err, want)
		}
	}
	for _, pes := range []int{0, 33} {
		if _, err := SizeFor(pes); err == nil {
			t.Errorf("SizeFor(%d) succeeded", pes)
		}
	}
	if _, err := New(5); err == nil {
		t.Error("New(5) succeeded")
	}
	counts := map[int]map[string]int{}
	for _, n := range Sizes {
		counts[n] = map[string]int{}
		for _, c := range MustNew(n).Components {
			counts[n][c.Part.Name]++
			if c.Group == "cable" {
				counts[n]["cable"]++
			}
		}
	}
	// docs/circuit.md, "Scaling": one 74LS125 and one 74LS126 per 4 PEs; 74LS30 trees at 8.
	for _, n := range Sizes {
		if counts[n]["74LS125"] != n/4 || counts[n]["74LS126"] != n/4 || counts[n]["cable"] != n || counts[n][CableConnector(n).Name] != n {
			t.Errorf("%d PEs: %v", n, counts[n])
		}
	}
	if counts[8]["74LS30"] != 8 || counts[16]["74LS30"] != 16 || counts[16]["74LS32"] != 2 || counts[32]["74LS30"] != 32 || counts[32]["74LS32"] != 6 {
		t.Errorf("tree chips: 8:%v 16:%v 32:%v", counts[8], counts[16], counts[32])
	}
}

func TestTrace(t *testing.T) {
	b := MustNew(4)
	l, _ := lpt.LineByName("D6")
	if got, want := b.Trace(1, l), "J2 pin 8 on net PE1.D6, U1 pin 2 (74LS20 4-input NAND trees)"; got != want {
		t.Errorf("Trace = %q, want %q", got, want)
	}
}
