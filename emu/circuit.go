package emu

import (
	"fmt"

	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// The compiled netlist (gates, drivers, nets, the cable lines of each
// port) is immutable and shared by every simulator of the board: each
// evaluator's private simulation (sim.go), and the timed simulator. What
// changes lives elsewhere: the port registers, faults and flip-flop states
// in the board's memory (state.go), the levels in each evaluator.
type gate struct {
	fn    hw.Func
	in    []int32 // nets (-1: unconnected, floats high); DFF: D, CLK, PRE, CLR
	en    int32   // buffer enable net, -1 for none
	enLow bool
	out   int32 // driver index, -1 when the output pin is not connected
	outN  int32 // DFF nQ driver
}

type driver struct {
	net int32
}

type net struct {
	name    string
	drivers []int32
	loads   []int32 // gates reading this net
	readers []int32 // ports whose status pins read this net
	multi   bool    // more than one driver: can see contention
}

// cableLine is one port line of one PE as the board sees it.
type cableLine struct {
	line   lpt.Line
	net    int32 // -1 when the board does not connect the pin
	driver int32 // PC-driven lines: the PC's driver on that net
}

// compile builds the immutable simulation structures of a netlist; their
// indices are deterministic, so every process compiling the same netlist
// agrees on them and on the memory layout.
func compile(h *hw.Board, pes int) *Board {
	b := &Board{hw: h, pes: pes}
	netIdx := map[*hw.Net]int32{}
	for _, n := range h.Nets {
		netIdx[n] = int32(len(b.nets))
		b.nets = append(b.nets, net{name: n.Name})
	}
	netOf := func(ref string, pin int) int32 {
		if n := h.NetOf(hw.Node{Ref: ref, Pin: pin}); n != nil {
			return netIdx[n]
		}
		return -1
	}
	addDriver := func(n int32) int32 {
		if n < 0 {
			return -1
		}
		d := int32(len(b.drivers))
		b.drivers = append(b.drivers, driver{net: n})
		b.nets[n].drivers = append(b.nets[n].drivers, d)
		return d
	}
	b.vcc = addDriver(netIdx[h.Net(hw.VCC)])
	b.gnd = addDriver(netIdx[h.Net(hw.GND)])
	for _, c := range h.Components {
		for _, u := range c.Part.Units {
			g := gate{fn: u.Func, en: -1, outN: -1}
			for _, p := range u.In {
				g.in = append(g.in, netOf(c.Ref, p))
			}
			switch u.Func {
			case hw.FuncDFF:
				g.in = append(g.in, netOf(c.Ref, u.Preset), netOf(c.Ref, u.Clear))
				g.outN = addDriver(netOf(c.Ref, u.NQ))
			case hw.FuncBuffer:
				if u.Enable != 0 {
					g.en, g.enLow = netOf(c.Ref, u.Enable), u.EnableLow
				}
			}
			g.out = addDriver(netOf(c.Ref, u.Out))
			gi := int32(len(b.gates))
			for _, n := range append(append([]int32(nil), g.in...), g.en) {
				if n >= 0 && !contains(b.nets[n].loads, gi) {
					b.nets[n].loads = append(b.nets[n].loads, gi)
				}
			}
			b.gates = append(b.gates, g)
		}
	}
	for k := 0; k < h.PEs; k++ {
		p := &isolated[Port](1)[0]
		*p = Port{b: b, pe: k}
		for _, l := range lpt.Lines {
			cl := cableLine{line: l, net: netOf(hw.ConnectorRef(k), l.Pin), driver: -1}
			if l.Output() {
				cl.driver = addDriver(cl.net)
				if cl.driver >= 0 {
					p.outputs = append(p.outputs, cl)
					p.outPins |= 1 << l.Pin
					p.outDriver[l.Pin] = cl.driver
				}
			}
			p.lines = append(p.lines, cl)
			if !l.Output() {
				p.inputs = append(p.inputs, cl)
				if cl.net >= 0 {
					b.nets[cl.net].readers = append(b.nets[cl.net].readers, int32(k))
				}
			}
		}
		b.ports = append(b.ports, p)
		b.ledNets = append(b.ledNets, [2]int32{netIdxByName(h, netIdx, hw.CableNet(k, "LED_G")), netIdxByName(h, netIdx, hw.CableNet(k, "LED_R"))})
	}
	for i := range b.nets {
		b.nets[i].multi = len(b.nets[i].drivers) > 1
	}
	b.derive()
	return b
}

func netIdxByName(h *hw.Board, idx map[*hw.Net]int32, name string) int32 {
	if n := h.Net(name); n != nil {
		return idx[n]
	}
	return -1
}

func contains(s []int32, v int32) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// maxFlipFlops is how many 74LS74 halves the board's flip-flop word holds
// (TTL_PAPERS has two: the barrier and the interrupt flag).
const maxFlipFlops = 4

// derive adds what the simulators need beyond the netlist: the flip-flops
// in gate order, each port's inert pins, and the memory layout.
func (b *Board) derive() {
	for i := range b.gates {
		if b.gates[i].fn == hw.FuncDFF {
			b.dffs = append(b.dffs, int32(i))
		}
	}
	if len(b.dffs) > maxFlipFlops {
		panic(fmt.Sprintf("emu: the netlist has %d flip-flops; the emulator holds at most %d", len(b.dffs), maxFlipFlops))
	}
	b.dffOf = make([]int8, len(b.gates))
	for i := range b.dffOf {
		b.dffOf[i] = -1
	}
	b.ready, b.intr = -1, -1
	for i, g := range b.dffs {
		b.dffOf[g] = int8(i)
		if d := b.gates[g].out; d >= 0 && b.nets[b.drivers[d].net].name == hw.NetRDYQ {
			b.ready = i
		}
		if d := b.gates[g].outN; d >= 0 && b.nets[b.drivers[d].net].name == hw.NetINTQ {
			b.intr = i
		}
	}
	for _, p := range b.ports {
		p.inert = b.inertPins(p)
		p.inertBits = inertBits(p.inert)
		for _, cl := range p.inputs {
			if cl.net >= 0 && b.readsOthers(cl.net, p.pe) {
				p.extBits |= cl.line.Mask
			}
		}
	}
	b.lay = newLayout(len(b.ports))
}

// inertPins are the PC-driven pins of p whose changes reach no flip-flop,
// no status line and no net with several drivers (on TTL_PAPERS: the LED
// lines, and nSelectIn, which the board leaves unconnected). A write that
// changes only these needs no evaluation: nothing a port reads, and no
// state, depends on it.
func (b *Board) inertPins(p *Port) lpt.Pins {
	var inert lpt.Pins
	for _, l := range lpt.Lines {
		if l.Output() {
			inert |= 1 << l.Pin
		}
	}
	for _, cl := range p.outputs {
		if b.reachesState(cl.net) {
			inert &^= 1 << cl.line.Pin
		}
	}
	return inert
}

// reachesState reports whether a net's level can reach a flip-flop, a
// status line or a net with several drivers.
func (b *Board) reachesState(n0 int32) bool {
	seen := map[int32]bool{}
	todo := []int32{n0}
	for len(todo) > 0 {
		n := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if seen[n] {
			continue
		}
		seen[n] = true
		if b.nets[n].multi || len(b.nets[n].readers) > 0 {
			return true
		}
		for _, gi := range b.nets[n].loads {
			g := &b.gates[gi]
			if g.fn == hw.FuncDFF {
				return true
			}
			if g.out >= 0 {
				todo = append(todo, b.drivers[g.out].net)
			}
		}
	}
	return false
}

// inertBits are the bits of a port word (data, then control) that drive
// only inert pins, or no pin at all.
func inertBits(inert lpt.Pins) uint64 {
	bits := uint64(0xffff)
	for _, l := range lpt.Lines {
		if !l.Output() || inert.High(l.Pin) {
			continue
		}
		if l.Reg == lpt.Data {
			bits &^= uint64(l.Mask)
		} else {
			bits &^= uint64(l.Mask) << 8
		}
	}
	return bits
}

// readsOthers reports whether a net's level depends, through combinational
// logic (not through a flip-flop), on a pin of a port other than pe.
func (b *Board) readsOthers(n0 int32, pe int) bool {
	own := map[int32]bool{}
	for _, cl := range b.ports[pe].outputs {
		own[cl.driver] = true
	}
	gateOf := map[int32]int32{}
	for gi, g := range b.gates {
		gateOf[g.out] = int32(gi)
		if g.outN >= 0 {
			gateOf[g.outN] = int32(gi)
		}
	}
	seen := map[int32]bool{}
	todo := []int32{n0}
	for len(todo) > 0 {
		n := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if n < 0 || seen[n] {
			continue
		}
		seen[n] = true
		for _, d := range b.nets[n].drivers {
			gi, isGate := gateOf[d]
			switch {
			case d == b.vcc || d == b.gnd || own[d]:
			case !isGate:
				return true // another port's pin
			case b.gates[gi].fn != hw.FuncDFF:
				todo = append(todo, b.gates[gi].in...)
				todo = append(todo, b.gates[gi].en)
			}
		}
	}
	return false
}
