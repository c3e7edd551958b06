// Package emu is a gate-level emulator of the TTL_PAPERS board.
//
// It compiles an hw netlist into an event-driven simulation of its 74LS
// chips — multi-input NANDs and ORs, 74LS74 flip-flops with asynchronous
// preset and clear (both low drives Q and nQ high) and rising-edge clocks,
// tri-state buffers wired onto shared nets, undriven inputs floating high —
// and gives each PE an emulated printer port that applies the SPP
// register↔pin inversions of package lpt, so the driver in package papers is
// exercised exactly as on real hardware. Propagation is zero-delay: a write
// settles the whole board before it returns (the part delays in hw are data
// for timing predictions, not simulated).
//
// Faults can be injected on the cable between a PE's port and the board:
// unplugged cables, and any line held at 0 or 1. Port operations are counted
// per PE. A Cluster runs one function per PE concurrently, which is how tests
// and newcomers run a PAPERS program without hardware.
package emu

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/lpt"
)

type gate struct {
	fn     hw.Func
	in     []int32 // nets (-1: unconnected, floats high); DFF: D, CLK, PRE, CLR
	en     int32   // buffer enable net, -1 for none
	enLow  bool
	out    int32 // driver index, -1 when the output pin is not connected
	outN   int32 // DFF nQ driver
	q, clk bool  // DFF state
	queued bool
}

type driver struct {
	net     int32
	on, val bool
}

type net struct {
	name    string
	drivers []int32
	loads   []int32 // gates reading this net
	val     bool
}

// Board is an emulated board. All methods are safe for concurrent use.
type Board struct {
	hw  *hw.Board
	pes int // PEs whose cables are plugged in at start

	mu         sync.Mutex
	nets       []net
	drivers    []driver
	gates      []gate
	queue      []int32
	contention uint64
	shared     []int32 // nets with more than one driver
	ports      []*Port
	ledNets    [][2]int32
}

// cableLine is one port line of one PE as the board sees it.
type cableLine struct {
	line   lpt.Line
	net    int32 // -1 when the board does not connect the pin
	driver int32 // PC-driven lines: the PC's driver on that net
}

// New builds an emulated board for pes PEs (1 to 32) on the smallest board
// that holds them; the cables of the remaining connectors are unplugged.
func New(pes int) (*Board, error) {
	size, err := hw.SizeFor(pes)
	if err != nil {
		return nil, err
	}
	return NewFromNetlist(hw.MustNew(size), pes)
}

// NewFromNetlist emulates the given netlist with the first pes cables plugged in.
func NewFromNetlist(h *hw.Board, pes int) (*Board, error) {
	if pes < 1 || pes > h.PEs {
		return nil, fmt.Errorf("emu: %d PEs do not fit the %d-PE board: use 1 to %d", pes, h.PEs, h.PEs)
	}
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
	addDriver := func(n int32, on, val bool) int32 {
		if n < 0 {
			return -1
		}
		d := int32(len(b.drivers))
		b.drivers = append(b.drivers, driver{net: n, on: on, val: val})
		b.nets[n].drivers = append(b.nets[n].drivers, d)
		return d
	}
	addDriver(netIdx[h.Net(hw.VCC)], true, true)
	addDriver(netIdx[h.Net(hw.GND)], true, false)
	for _, c := range h.Components {
		for _, u := range c.Part.Units {
			g := gate{fn: u.Func, en: -1, outN: -1}
			for _, p := range u.In {
				g.in = append(g.in, netOf(c.Ref, p))
			}
			switch u.Func {
			case hw.FuncDFF:
				g.in = append(g.in, netOf(c.Ref, u.Preset), netOf(c.Ref, u.Clear))
				g.outN = addDriver(netOf(c.Ref, u.NQ), true, true)
			case hw.FuncBuffer:
				if u.Enable != 0 {
					g.en, g.enLow = netOf(c.Ref, u.Enable), u.EnableLow
				}
			}
			g.out = addDriver(netOf(c.Ref, u.Out), true, true)
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
		p := &Port{b: b, pe: k, plugged: k < pes}
		for _, l := range lpt.Lines {
			cl := cableLine{line: l, net: netOf(hw.ConnectorRef(k), l.Pin), driver: -1}
			if l.Output() {
				cl.driver = addDriver(cl.net, p.plugged, true)
			}
			p.lines = append(p.lines, cl)
		}
		p.pins = lpt.OutputPins(0, 0)
		b.ports = append(b.ports, p)
		b.ledNets = append(b.ledNets, [2]int32{netIdxByName(h, netIdx, hw.CableNet(k, "LED_G")), netIdxByName(h, netIdx, hw.CableNet(k, "LED_R"))})
	}
	for i := range b.nets {
		if len(b.nets[i].drivers) > 1 {
			b.shared = append(b.shared, int32(i))
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	// Power-on: every port's registers read 0; settle the board from there.
	for _, p := range b.ports {
		p.driveLocked(lpt.OutputPins(0, 0), true)
	}
	for i := range b.nets {
		b.nets[i].val = b.resolve(int32(i))
	}
	for i := range b.gates {
		g := &b.gates[i]
		if g.fn == hw.FuncDFF {
			g.clk = b.level(g.in[1])
		}
		b.push(int32(i))
	}
	b.settle()
	return b, nil
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

// Netlist returns the board's hw netlist.
func (b *Board) Netlist() *hw.Board { return b.hw }

// PEs returns the number of connectors on the board.
func (b *Board) PEs() int { return b.hw.PEs }

// level is a gate input's level: unconnected inputs float high.
func (b *Board) level(n int32) bool { return n < 0 || b.nets[n].val }

// resolve computes a net's level from its drivers: an undriven net floats
// high; drivers that disagree (contention) pull it low, as a TTL low output
// sinks more current than a high one sources.
func (b *Board) resolve(n int32) bool {
	any, val := false, true
	for _, d := range b.nets[n].drivers {
		dr := &b.drivers[d]
		if !dr.on {
			continue
		}
		if any && dr.val != val {
			return false
		}
		any, val = true, dr.val
	}
	return val
}

func (b *Board) push(g int32) {
	if !b.gates[g].queued {
		b.gates[g].queued = true
		b.queue = append(b.queue, g)
	}
}

// setDriver changes a driver and re-resolves its net, queueing the net's
// loads when its level changes.
func (b *Board) setDriver(d int32, on, val bool) {
	if d < 0 {
		return
	}
	dr := &b.drivers[d]
	if dr.on == on && dr.val == val {
		return
	}
	dr.on, dr.val = on, val
	n := &b.nets[dr.net]
	if v := b.resolve(dr.net); v != n.val {
		n.val = v
		for _, g := range n.loads {
			b.push(g)
		}
	}
}

// settle evaluates queued gates until the board is stable.
func (b *Board) settle() {
	for i := 0; i < len(b.queue); i++ {
		if i > 100000 {
			panic("emu: the board does not settle (a combinational loop in the netlist?)")
		}
		g := &b.gates[b.queue[i]]
		g.queued = false
		switch g.fn {
		case hw.FuncNAND:
			all := true
			for _, n := range g.in {
				all = all && b.level(n)
			}
			b.setDriver(g.out, true, !all)
		case hw.FuncOR:
			anyHigh := false
			for _, n := range g.in {
				anyHigh = anyHigh || b.level(n)
			}
			b.setDriver(g.out, true, anyHigh)
		case hw.FuncBuffer:
			on := g.en < 0 || b.level(g.en) != g.enLow
			b.setDriver(g.out, on, b.level(g.in[0]))
		case hw.FuncDFF:
			d, clk, pre, clr := b.level(g.in[0]), b.level(g.in[1]), b.level(g.in[2]), b.level(g.in[3])
			rising := clk && !g.clk
			g.clk = clk
			q, nq := g.q, !g.q
			switch {
			case !pre && !clr: // both asserted: Q and nQ both high
				q, nq = true, true
			case !pre:
				g.q = true
				q, nq = true, false
			case !clr:
				g.q = false
				q, nq = false, true
			case rising:
				g.q = d
				q, nq = d, !d
			}
			b.setDriver(g.out, true, q)
			b.setDriver(g.outN, true, nq)
		}
	}
	b.queue = b.queue[:0]
	// Contention that outlives the settle is a design fault; passing overlap
	// while one buffer turns on before another turns off is not.
	for _, n := range b.shared {
		on := 0
		var val bool
		for _, d := range b.nets[n].drivers {
			if dr := &b.drivers[d]; dr.on {
				if on > 0 && dr.val != val {
					b.contention++
				}
				on, val = on+1, dr.val
			}
		}
	}
	for _, p := range b.ports {
		p.updateStatusLocked()
	}
}

// Port returns PE k's emulated printer port. A port can be held by one
// user at a time: Close it to hand it on.
func (b *Board) Port(pe int) (*Port, error) {
	if pe < 0 || pe >= len(b.ports) {
		return nil, fmt.Errorf("emu: PE %d out of range: the board has PEs 0 to %d", pe, len(b.ports)-1)
	}
	p := b.ports[pe]
	if !p.claimed.CompareAndSwap(false, true) {
		return nil, fmt.Errorf("emu: PE %d's port is already open (two PEs on one port?): close it first", pe)
	}
	return p, nil
}

// LED is the colour of a PE's front-panel LED.
type LED uint8

const (
	Dark LED = iota
	Green
	Red
	Orange
)

func (l LED) String() string { return [...]string{"dark", "green", "red", "orange"}[l] }

// LED returns the colour PE k's LED shows, from the LED driver outputs.
func (b *Board) LED(pe int) LED {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := b.ledNets[pe]
	var l LED
	if b.level(n[0]) {
		l |= Green
	}
	if b.level(n[1]) {
		l |= Red
	}
	return l
}

// NetLevel returns the level of a named net, for tests and diagnosis.
func (b *Board) NetLevel(name string) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := range b.nets {
		if b.nets[i].name == name {
			return b.nets[i].val, nil
		}
	}
	return false, fmt.Errorf("emu: no net %q on the %d-PE board", name, b.hw.PEs)
}

// Contention counts the times two enabled drivers disagreed on a net. A
// correct board never has any.
func (b *Board) Contention() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.contention
}

// explainStall names the PEs that keep a barrier at the given strobe phase
// from completing.
func (b *Board) explainStall(self int, phase uint8) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	want := "S0"
	if phase == lpt.S1 {
		want = "S1"
	}
	var late []string
	for k, p := range b.ports {
		if !p.plugged {
			continue
		}
		var s uint8
		for _, cl := range p.lines {
			if (cl.line.Mask == lpt.S0 || cl.line.Mask == lpt.S1) && cl.line.Reg == lpt.Data && b.level(cl.net) {
				s |= cl.line.Mask
			}
		}
		switch {
		case s == 0:
			late = append(late, fmt.Sprintf("PE %d holds S0=S1=0 (stalling every barrier: not started, closed, or raising an interrupt)", k))
		case s&phase == 0:
			late = append(late, fmt.Sprintf("PE %d has not arrived (its strobes do not show %s)", k, want))
		}
	}
	if len(late) == 0 {
		return fmt.Sprintf("every plugged PE shows %s, yet PE %d has not seen ready: check its Busy line", want, self)
	}
	return strings.Join(late, "; ")
}

// Port is one PE's emulated SPP printer port. It implements lpt.Port. Its
// register methods are meant to be called from one goroutine (the PE).
type Port struct {
	b       *Board
	pe      int
	claimed atomic.Bool
	ops     atomic.Uint64
	status  atomic.Uint32

	// Guarded by b.mu (written only by the owning PE, so it may read them).
	data, control uint8
	pins          lpt.Pins // PC-driven pin levels from the registers
	lines         []cableLine
	plugged       bool
	stuck         map[int]bool // DB-25 pin → held level
}

var _ lpt.Port = (*Port)(nil)
var _ lpt.StallExplainer = (*Port)(nil)

// PE returns the connector this port is wired to.
func (p *Port) PE() int { return p.pe }

// WriteData writes the data register.
func (p *Port) WriteData(v uint8) {
	p.ops.Add(1)
	p.b.mu.Lock()
	p.data = v
	p.driveLocked(lpt.OutputPins(v, p.control), false)
	p.b.settle()
	p.b.mu.Unlock()
}

// WriteControl writes the control register.
func (p *Port) WriteControl(v uint8) {
	p.ops.Add(1)
	p.b.mu.Lock()
	p.control = v
	p.driveLocked(lpt.OutputPins(p.data, v), false)
	p.b.settle()
	p.b.mu.Unlock()
}

// ReadData reads back the data register (the latch, as on an SPP port).
func (p *Port) ReadData() uint8 {
	p.ops.Add(1)
	return p.data
}

// ReadControl reads back the control register.
func (p *Port) ReadControl() uint8 {
	p.ops.Add(1)
	return p.control
}

// ReadStatus reads the status register.
func (p *Port) ReadStatus() uint8 {
	p.ops.Add(1)
	return uint8(p.status.Load())
}

// Err always returns nil: the emulated port cannot fail.
func (p *Port) Err() error { return nil }

// Close releases the port for another user. The registers keep their values,
// as a real port's do when a program exits.
func (p *Port) Close() error {
	p.claimed.Store(false)
	return nil
}

// Ops returns the number of port operations made on this port.
func (p *Port) Ops() uint64 { return p.ops.Load() }

// ExplainStall says which PEs keep the current barrier from completing.
func (p *Port) ExplainStall() string {
	p.b.mu.Lock()
	phase := p.data & lpt.Strobes
	p.b.mu.Unlock()
	if phase == lpt.Strobes || phase == 0 {
		return ""
	}
	return p.b.explainStall(p.pe, phase)
}

// driveLocked puts the PC-driven pin levels on the cable, through any faults.
func (p *Port) driveLocked(pins lpt.Pins, force bool) {
	changed := pins ^ p.pins
	p.pins = pins
	for _, cl := range p.lines {
		if cl.driver < 0 || (!force && !changed.High(cl.line.Pin)) {
			continue
		}
		level := pins.High(cl.line.Pin)
		if s, ok := p.stuck[cl.line.Pin]; ok {
			level = s
		}
		p.b.setDriver(cl.driver, p.plugged, level)
	}
}

// updateStatusLocked recomputes the status register from the cable's input
// pins. Inputs of an unplugged cable float high at the PC.
func (p *Port) updateStatusLocked() {
	pins := lpt.InputPins
	for _, cl := range p.lines {
		if cl.line.Output() {
			continue
		}
		level := !p.plugged || p.b.level(cl.net)
		if s, ok := p.stuck[cl.line.Pin]; ok {
			level = s
		}
		pins = pins.With(cl.line.Pin, level)
	}
	p.status.Store(uint32(lpt.StatusFromPins(pins)))
}
