// Package hw is the TTL_PAPERS board as data: a 74LS part library with real
// pinouts and delays, and a netlist builder for the 4-PE board of the seed
// (U1-U8, reconstructed gate by gate in docs/circuit.md) and its 8-, 16- and 32-PE
// scalings.
//
// The netlist is the project's single source of truth for the circuit: the
// emulator (package emu) simulates it gate by gate, selftest names its chips
// and pins in diagnoses, and the KiCad schematic is generated from it. Cable
// connector pins come from package lpt's line table.
package hw

import (
	"fmt"
	"sort"

	"github.com/ttlpapers/ttlpapers/lpt"
)

// Component is one placed part on the board.
type Component struct {
	Ref  string // reference designator: "U1", "J3"
	Part *Part
	// Role says what the part does on this board, for schematics and BOMs.
	Role string
	// Group is the functional area ("barrier", "interrupt", "mux", "data",
	// "led", "cable", "power"): one schematic area per group.
	Group string
	// Decouples, for a decoupling capacitor, is the chip whose supply pins
	// it serves (the board places it beside that chip).
	Decouples *Component
}

// Node is one pin of one component.
type Node struct {
	Ref string
	Pin int
}

func (n Node) String() string { return fmt.Sprintf("%s.%d", n.Ref, n.Pin) }

// Net is a set of pins wired together.
type Net struct {
	Name  string
	Nodes []Node
}

// Names of the power nets.
const (
	VCC = "VCC"
	GND = "GND"
)

// Netlist is a board as designed: its components and the nets that wire
// them, the TTL_PAPERS board's (New) or the Pi adapter's (PiAdapter).
type Netlist struct {
	PEs        int
	Name       string
	Revision   string
	Components []*Component
	Nets       []*Net

	byRef   map[string]*Component
	byNode  map[Node]*Net
	netName map[string]*Net
	pools   map[string]*pool
	uCount  int
}

// Sizes lists the PE counts a board can be built for, up to lpt.MaxPEs.
var Sizes = []int{4, 8, 16, lpt.MaxPEs}

// SizeFor returns the smallest board that holds pes PEs.
func SizeFor(pes int) (int, error) {
	for _, s := range Sizes {
		if pes >= 1 && pes <= s {
			return s, nil
		}
	}
	return 0, fmt.Errorf("hw: no TTL_PAPERS board holds %d PEs: boards are built for 1 to %d PEs (sizes %v; beyond %[2]d the seed recommends programmable logic)", pes, lpt.MaxPEs, Sizes)
}

// Revision of the board design.
const Revision = "1"

// New builds the board for exactly pes PEs (4, 8, 16 or 32).
func New(pes int) (*Netlist, error) {
	if s, err := SizeFor(pes); err != nil || s != pes {
		return nil, fmt.Errorf("hw: a board is built for %v PEs, not %d (use hw.SizeFor to pick one and leave the extra cables unplugged)", Sizes, pes)
	}
	b := &Netlist{
		PEs: pes, Name: fmt.Sprintf("TTL_PAPERS %d-PE", pes), Revision: Revision,
		byRef: map[string]*Component{}, byNode: map[Node]*Net{}, netName: map[string]*Net{}, pools: map[string]*pool{},
	}
	b.build()
	return b, nil
}

// MustNew is New for sizes known to be valid.
func MustNew(pes int) *Netlist {
	b, err := New(pes)
	if err != nil {
		panic(err)
	}
	return b
}

// Net names (docs/circuit.md, "The four-PE board"). Per-PE cable nets are "PE<k>.<line>".
const (
	NetAllS0  = "nALL_S0"  // low when every PE drives S0
	NetAllS1  = "nALL_S1"  // low when every PE drives S1
	NetIRQAny = "IRQ_ANY"  // high when any PE requests an interrupt
	NetAckAll = "nACK_ALL" // low when every PE acknowledges (P_NAK=0)
	NetRDYQ   = "RDYQ"     // barrier flip-flop Q
	NetINTQ   = "nINTQ"    // interrupt flip-flop nQ
)

// The LED nets of each PE, CableNet(k, LEDGreen) and CableNet(k, LEDRed):
// the U8 buffer outputs that light the PE's bicolour LED.
const (
	LEDGreen = "LED_G"
	LEDRed   = "LED_R"
)

// CableNet is the name of the net on PE k's cable line (for PC-driven lines
// and Busy; the data inputs I0-I3 may be shared between PEs).
func CableNet(pe int, line string) string { return fmt.Sprintf("PE%d.%s", pe, line) }

// InputNet is the name of the net carrying NAND bit b; for boards above 4
// PEs each group of 4 PEs has its own driven copy.
func (b *Netlist) InputNet(bit, pe int) string {
	if b.PEs <= 4 {
		return fmt.Sprintf("I%d", bit)
	}
	return fmt.Sprintf("I%d.G%d", bit, pe/4)
}

// ConnectorRef is the reference designator of PE k's cable connector.
func ConnectorRef(pe int) string { return fmt.Sprintf("J%d", pe+1) }

// maxDB25 is the largest board whose cables plug into DB-25s on the board;
// larger ones take IDC26 headers: 16 DB-25s already make a board 461 mm
// wide, and 32 make one beyond what the board houses make in two layers.
const maxDB25 = 8

// CableConnector is the part that takes each PE's cable on a board of pes
// PEs.
func CableConnector(pes int) *Part {
	if pes > maxDB25 {
		return IDC26
	}
	return DB25
}

// PortNode is the board pin that PE k's cable joins to pin n of the PC's
// DB-25 port.
func (b *Netlist) PortNode(pe, n int) Node {
	ref := ConnectorRef(pe)
	if c := b.byRef[ref]; c != nil && c.Part.CablePin != nil {
		n = c.Part.CablePin(n)
	}
	return Node{ref, n}
}

// The cable lines by the TTL_PAPERS signal each carries, from package
// lpt's table.
var (
	lineS0       = lineName(lpt.Data, lpt.S0)
	lineS1       = lineName(lpt.Data, lpt.S1)
	lineLG       = lineName(lpt.Data, lpt.LG)
	lineLR       = lineName(lpt.Data, lpt.LR)
	lineNAK      = lineName(lpt.Control, lpt.NAK)
	lineIRQ      = lineName(lpt.Control, lpt.IRQ)
	lineSEL      = lineName(lpt.Control, lpt.SEL)
	lineRDY      = lineName(lpt.Status, lpt.RDY)
	lineReserved = lineName(lpt.Control, lpt.ControlSelectIn)
)

func lineName(r lpt.Register, mask uint8) string {
	l, ok := lpt.LineFor(r, mask)
	if !ok {
		panic(fmt.Sprintf("hw: no port line carries %v bit %#x", r, mask))
	}
	return l.Name
}

// dataLine is the name of the port line driving data bit (NAND input) b.
func dataLine(bit int) string { return lineName(lpt.Data, 1<<bit) }

// inputBit is the NAND bit a status line carries, or -1 for Busy.
func inputBit(l lpt.Line) int {
	for bit := 0; bit < 4; bit++ {
		if l.Reg == lpt.Status && l.Mask == 1<<(lpt.InputShift+bit) {
			return bit
		}
	}
	return -1
}

// build wires the board. The order of the steps is the order of the
// reference designators (U1, U2, …).
func (b *Netlist) build() {
	b.trees()
	b.flipFlops()
	b.muxes()
	b.dataNANDs()
	b.ledDrivers()
	b.connectors()
	b.finishPools()
	b.power()
	b.passives()
}

// perPE is the cable net of line on every PE.
func (b *Netlist) perPE(line string) []string {
	nets := make([]string, b.PEs)
	for k := range nets {
		nets[k] = CableNet(k, line)
	}
	return nets
}

// trees builds the barrier's two NAND trees, which preset and clear one
// flip-flop half, and the interrupt request and acknowledge trees.
func (b *Netlist) trees() {
	b.tree("barrier", "S0 tree", b.perPE(lineS0), NetAllS0)
	b.tree("barrier", "S1 tree", b.perPE(lineS1), NetAllS1)
	b.tree("interrupt", "IRQ tree", b.perPE(lineIRQ), NetIRQAny)
	b.tree("interrupt", "acknowledge tree", b.perPE(lineNAK), NetAckAll)
}

// flipFlops places the 74LS74: the ready flip-flop, preset by nALL_S0 and
// cleared by nALL_S1, and the interrupt flip-flop, clocked by IRQ_ANY and
// cleared by every PE's acknowledge.
func (b *Netlist) flipFlops() {
	ff := b.chip(LS74, "barrier", "ready and interrupt flip-flops")
	b.connect(NetAllS0, Node{ff.Ref, 1})
	b.connect(VCC, Node{ff.Ref, 2}, Node{ff.Ref, 3})
	b.connect(NetAllS1, Node{ff.Ref, 4})
	b.connect(NetRDYQ, Node{ff.Ref, 5})
	b.connect(NetINTQ, Node{ff.Ref, 8})
	b.connect(VCC, Node{ff.Ref, 10}, Node{ff.Ref, 12})
	b.connect(NetIRQAny, Node{ff.Ref, 11})
	b.connect(NetAckAll, Node{ff.Ref, 13})
}

// muxes puts each PE's multiplexer onto Busy: P_SEL=0 shows RDYQ, P_SEL=1
// shows nINTQ.
func (b *Netlist) muxes() {
	rdy, intq := func(int) string { return NetRDYQ }, func(int) string { return NetINTQ }
	if b.PEs > 8 {
		// The flip-flop outputs would drive too many mux inputs: buffer them,
		// one copy per 8 PEs.
		rdyG := b.fanout("barrier", "flip-flop output drivers", NetRDYQ, b.PEs/8, func(g int) string { return fmt.Sprintf("RDYQ.G%d", g) })
		intqG := b.fanout("barrier", "flip-flop output drivers", NetINTQ, b.PEs/8, func(g int) string { return fmt.Sprintf("nINTQ.G%d", g) })
		rdy = func(pe int) string { return rdyG(pe / 8) }
		intq = func(pe int) string { return intqG(pe / 8) }
	}
	for k := 0; k < b.PEs; k++ {
		c, u := b.unit("mux125", LS125, "mux", "ready buffers (P_SEL=0)")
		b.connect(rdy(k), Node{c.Ref, u.In[0]})
		b.connect(CableNet(k, lineSEL), Node{c.Ref, u.Enable})
		b.connect(CableNet(k, lineRDY), Node{c.Ref, u.Out})
		c, u = b.unit("mux126", LS126, "mux", "interrupt buffers (P_SEL=1)")
		b.connect(intq(k), Node{c.Ref, u.In[0]})
		b.connect(CableNet(k, lineSEL), Node{c.Ref, u.Enable})
		b.connect(CableNet(k, lineRDY), Node{c.Ref, u.Out})
	}
}

// dataNANDs builds one NAND per data bit, driving every PE's input line:
// a 74LS40 buffer gate up to 4 PEs, a tree and line drivers beyond.
func (b *Netlist) dataNANDs() {
	for bit := 0; bit < 4; bit++ {
		ins := b.perPE(dataLine(bit))
		if b.PEs <= 4 {
			c, u := b.unit("nandbuf", LS40, "data", "data NAND buffers")
			for i, net := range ins {
				b.connect(net, Node{c.Ref, u.In[i]})
			}
			b.connect(b.InputNet(bit, 0), Node{c.Ref, u.Out})
			continue
		}
		all := fmt.Sprintf("I%d", bit)
		b.tree("data", fmt.Sprintf("data bit %d NAND", bit), ins, all)
		b.fanout("data", "data line drivers", all, b.PEs/4, func(g int) string { return b.InputNet(bit, g*4) })
	}
}

// ledDrivers drives each PE's green and red LED through a line driver.
func (b *Netlist) ledDrivers() {
	for k := 0; k < b.PEs; k++ {
		for _, led := range []struct{ line, net string }{{lineLG, LEDGreen}, {lineLR, LEDRed}} {
			c, u := b.unit("led", LS244, "led", "LED drivers")
			b.connect(CableNet(k, led.line), Node{c.Ref, u.In[0]})
			b.connect(CableNet(k, led.net), Node{c.Ref, u.Out})
		}
	}
}

// connectors places each PE's cable connector and puts its pins on their
// nets, from lpt's line table.
func (b *Netlist) connectors() {
	for k := 0; k < b.PEs; k++ {
		b.add(ConnectorRef(k), CableConnector(b.PEs), "cable", fmt.Sprintf("PE %d printer cable", k))
		for _, l := range lpt.Lines {
			switch {
			case l.Name == lineReserved: // not connected
			case inputBit(l) >= 0:
				b.connect(b.InputNet(inputBit(l), k), b.PortNode(k, l.Pin))
			default:
				b.connect(CableNet(k, l.Name), b.PortNode(k, l.Pin))
			}
		}
		for _, p := range lpt.GroundPins {
			b.connect(GND, b.PortNode(k, p))
		}
	}
}

// Nets that only the passives use.
const (
	NetPowerLED = "PWR_LED_A" // power LED anode, after its resistor
)

// LEDAnodeNet is the net between PE k's LED resistor and the LED's anode for
// the given colour net (LEDGreen or LEDRed).
func LEDAnodeNet(pe int, colour string) string { return CableNet(pe, colour+"_A") }

// passives adds what a real board needs beyond the logic: a decoupling
// capacitor per chip, the LEDs and their resistors, the blue power light,
// and the power input with its fuse, reverse-polarity clamp and bulk
// capacitors (powerInput).
func (b *Netlist) passives() {
	var chips []*Component
	for _, c := range b.Components {
		if c.Part.Logic() {
			chips = append(chips, c)
		}
	}
	for i, c := range chips {
		dc := b.add(fmt.Sprintf("C%d", i+1), Cap100n, "power", "decoupling for "+c.Ref)
		dc.Decouples = c
		b.connect(VCC, Node{dc.Ref, 1})
		b.connect(GND, Node{dc.Ref, 2})
	}
	for k := 0; k < b.PEs; k++ {
		led := b.add(fmt.Sprintf("D%d", k+1), LEDBicolour, "led", fmt.Sprintf("PE %d status light", k))
		for i, colour := range []string{LEDGreen, LEDRed} {
			r := b.add(fmt.Sprintf("R%d", 2*k+i+1), R220, "led", fmt.Sprintf("PE %d %s resistor", k, colour))
			b.connect(CableNet(k, colour), Node{r.Ref, 1})
			b.connect(LEDAnodeNet(k, colour), Node{r.Ref, 2}, Node{led.Ref, ledAnode[i]})
		}
		b.connect(GND, Node{led.Ref, ledCathode})
	}
	n := b.PEs
	j := b.add(fmt.Sprintf("J%d", n+1), PowerIn, "power", "5 V power input")
	b.connect(GND, Node{j.Ref, 2})
	b.powerInput(j, fmt.Sprintf("C%d", len(chips)+1), fmt.Sprintf("D%d", n+2))
	r := b.add(fmt.Sprintf("R%d", 2*n+1), R1k, "power", "power LED resistor")
	b.connect(VCC, Node{r.Ref, 1})
	b.connect(NetPowerLED, Node{r.Ref, 2})
	led := b.add(fmt.Sprintf("D%d", n+1), LEDBlue, "power", "power light")
	b.connect(NetPowerLED, Node{led.Ref, 2})
	b.connect(GND, Node{led.Ref, 1})
	b.bulkCaps(chips, len(chips)+2)
}

// tree builds NAND(ins) onto net out: one 74LS20 gate for 4 inputs, one
// 74LS30 for 8, and 74LS30s ORed by 74LS32s beyond (NAND(all) = OR of the
// NANDs of the parts).
func (b *Netlist) tree(group, role string, ins []string, out string) {
	if len(ins) <= 4 {
		c, u := b.unit("nand4", LS20, group, "4-input NAND trees")
		for i, net := range ins {
			b.connect(net, Node{c.Ref, u.In[i]})
		}
		b.connect(out, Node{c.Ref, u.Out})
		return
	}
	var parts []string
	for i := 0; i < len(ins); i += 8 {
		c := b.chip(LS30, group, role)
		net := out
		if len(ins) > 8 {
			net = fmt.Sprintf("%s.%d", out, i/8)
		}
		for j, in := range ins[i : i+8] {
			b.connect(in, Node{c.Ref, LS30.Units[0].In[j]})
		}
		b.connect(net, Node{c.Ref, LS30.Units[0].Out})
		parts = append(parts, net)
	}
	// OR the partial NANDs pairwise down to one.
	for level := 0; len(parts) > 1; level++ {
		var next []string
		for i := 0; i < len(parts); i += 2 {
			net := out
			if len(parts) > 2 {
				net = fmt.Sprintf("%s.or%d", out, i/2)
			}
			c, u := b.unit("or", LS32, group, "OR of partial NAND trees")
			b.connect(parts[i], Node{c.Ref, u.In[0]})
			b.connect(parts[i+1], Node{c.Ref, u.In[1]})
			b.connect(net, Node{c.Ref, u.Out})
			next = append(next, net)
		}
		parts = next
	}
}

// fanout drives copies of net src through count 74LS244 buffers.
func (b *Netlist) fanout(group, role, src string, count int, name func(g int) string) func(int) string {
	for g := 0; g < count; g++ {
		c, u := b.unit(group+"drv", LS244, group, role)
		b.connect(src, Node{c.Ref, u.In[0]})
		b.connect(name(g), Node{c.Ref, u.Out})
	}
	return name
}

// pool hands out the units of a multi-unit part in order, starting a new
// chip when one is full.
type pool struct {
	part  *Part
	comps []*Component
	used  int
}

func (b *Netlist) chip(p *Part, group, role string) *Component {
	b.uCount++
	return b.add(fmt.Sprintf("U%d", b.uCount), p, group, role)
}

func (b *Netlist) unit(key string, p *Part, group, role string) (*Component, Unit) {
	pl := b.pools[key]
	if pl == nil {
		pl = &pool{part: p}
		b.pools[key] = pl
	}
	if pl.used%len(p.Units) == 0 {
		pl.comps = append(pl.comps, b.chip(p, group, role))
	}
	u := p.Units[pl.used%len(p.Units)]
	pl.used++
	return pl.comps[len(pl.comps)-1], u
}

// finishPools ties the inputs of unused units to a defined level (and
// enables of unused buffers to their disabled level), as TTL practice asks.
func (b *Netlist) finishPools() {
	keys := make([]string, 0, len(b.pools))
	for k := range b.pools {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		pl := b.pools[k]
		for pl.used%len(pl.part.Units) != 0 {
			c, u := pl.comps[len(pl.comps)-1], pl.part.Units[pl.used%len(pl.part.Units)]
			for _, p := range u.In {
				b.connect(GND, Node{c.Ref, p})
			}
			if u.Enable != 0 && len(pl.part.Units) == 4 { // quad buffers: per-unit enable
				level := GND
				if u.EnableLow {
					level = VCC
				}
				b.connect(level, Node{c.Ref, u.Enable})
			}
			pl.used++
		}
	}
}

// power wires every chip's supply pins and ties line-driver enables low.
func (b *Netlist) power() {
	for _, c := range b.Components {
		for _, p := range c.Part.Pins {
			switch p.Type {
			case PinPower:
				b.connect(VCC, Node{c.Ref, p.Num})
			case PinGround:
				b.connect(GND, Node{c.Ref, p.Num})
			}
		}
		if c.Part == LS244 {
			b.connect(GND, Node{c.Ref, 1}, Node{c.Ref, 19})
		}
	}
}

func (b *Netlist) add(ref string, p *Part, group, role string) *Component {
	c := &Component{Ref: ref, Part: p, Role: role, Group: group}
	b.Components = append(b.Components, c)
	b.byRef[ref] = c
	return c
}

// connect puts nodes on the named net. A pin belongs to at most one net.
func (b *Netlist) connect(name string, nodes ...Node) {
	net := b.netName[name]
	if net == nil {
		net = &Net{Name: name}
		b.Nets = append(b.Nets, net)
		b.netName[name] = net
	}
	for _, nd := range nodes {
		if old := b.byNode[nd]; old != nil {
			if old == net {
				continue
			}
			panic(fmt.Sprintf("hw: pin %v on nets %s and %s", nd, old.Name, name))
		}
		net.Nodes = append(net.Nodes, nd)
		b.byNode[nd] = net
	}
}

// Component returns the component with the given reference, or nil.
func (b *Netlist) Component(ref string) *Component { return b.byRef[ref] }

// NetOf returns the net a pin is on, or nil when it is not connected.
func (b *Netlist) NetOf(n Node) *Net { return b.byNode[n] }

// Net returns the named net, or nil.
func (b *Netlist) Net(name string) *Net { return b.netName[name] }

// Trace describes where PE k's port line lands on the board: the cable
// connector pin and the chip pins on the same net, e.g. "J1 pin 8 → U1 pin 1
// (74LS20 S0 tree)". Selftest uses it to name what to check.
func (b *Netlist) Trace(pe int, line lpt.Line) string {
	j := b.PortNode(pe, line.Pin)
	net := b.byNode[j]
	s := fmt.Sprintf("%s pin %d", j.Ref, j.Pin)
	if net == nil {
		return s + " (not connected on the board)"
	}
	s += " on net " + net.Name
	for _, nd := range net.Nodes {
		c := b.byRef[nd.Ref]
		if nd == j || c.Group == "cable" {
			continue
		}
		s += fmt.Sprintf(", %s pin %d (%s %s)", nd.Ref, nd.Pin, c.Part.Name, c.Role)
	}
	return s
}
