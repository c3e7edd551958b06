package emu

import (
	"fmt"

	"github.com/ttlpapers/ttlpapers/emu/netlist"
	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// The compiled netlist (package emu/netlist) is immutable and shared by
// every evaluator's private simulation (sim.go). What changes lives
// elsewhere: the port registers, faults and flip-flop states in the
// board's memory (state.go), the levels in each evaluator.
type (
	gate      = netlist.Gate
	driver    = netlist.Driver
	net       = netlist.Net
	cableLine = netlist.CableLine
)

// compile builds the board's simulation structures from a netlist: the
// compiled circuit, and each connector's port.
func compile(h *hw.Netlist, pes int) *Board {
	c := netlist.Compile(h)
	b := &Board{hw: h, pes: pes, nets: c.Nets, drivers: c.Drivers, gates: c.Gates, vcc: c.VCC, gnd: c.GND}
	for k, conn := range c.Connectors {
		p := &isolated[Port](1)[0]
		*p = Port{b: b, pe: k, lines: conn.Lines, outputs: conn.Outputs, inputs: conn.Inputs}
		for _, cl := range conn.Outputs {
			p.outPins |= 1 << cl.Line.Pin
			p.outDriver[cl.Line.Pin] = cl.Driver
		}
		b.ports = append(b.ports, p)
		b.ledNets = append(b.ledNets, [2]int32{c.NetByName(hw.CableNet(k, "LED_G")), c.NetByName(hw.CableNet(k, "LED_R"))})
	}
	b.derive()
	return b
}

// maxFlipFlops is how many 74LS74 halves the board's flip-flop word holds
// (TTL_PAPERS has two: the barrier and the interrupt flag).
const maxFlipFlops = 4

// derive adds what the simulators need beyond the netlist: the flip-flops
// in gate order, each port's inert pins, and the memory layout.
func (b *Board) derive() {
	for i := range b.gates {
		if b.gates[i].Fn == hw.FuncDFF {
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
		if d := b.gates[g].Out; d >= 0 && b.nets[b.drivers[d].Net].Name == hw.NetRDYQ {
			b.ready = i
		}
		if d := b.gates[g].OutN; d >= 0 && b.nets[b.drivers[d].Net].Name == hw.NetINTQ {
			b.intr = i
		}
	}
	for _, p := range b.ports {
		p.inert = b.inertPins(p)
		p.inertBits = inertBits(p.inert)
		for _, cl := range p.inputs {
			if cl.Net >= 0 && b.readsOthers(cl.Net, p.pe) {
				p.extBits |= cl.Line.Mask
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
		if b.reachesState(cl.Net) {
			inert &^= 1 << cl.Line.Pin
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
		if b.nets[n].Multi || len(b.nets[n].Readers) > 0 {
			return true
		}
		for _, gi := range b.nets[n].Loads {
			g := &b.gates[gi]
			if g.Fn == hw.FuncDFF {
				return true
			}
			if g.Out >= 0 {
				todo = append(todo, b.drivers[g.Out].Net)
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
		own[cl.Driver] = true
	}
	gateOf := map[int32]int32{}
	for gi, g := range b.gates {
		gateOf[g.Out] = int32(gi)
		if g.OutN >= 0 {
			gateOf[g.OutN] = int32(gi)
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
		for _, d := range b.nets[n].Drivers {
			gi, isGate := gateOf[d]
			switch {
			case d == b.vcc || d == b.gnd || own[d]:
			case !isGate:
				return true // another port's pin
			case b.gates[gi].Fn != hw.FuncDFF:
				todo = append(todo, b.gates[gi].In...)
				todo = append(todo, b.gates[gi].En)
			}
		}
	}
	return false
}
