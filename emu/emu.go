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
// per PE. Package emulate runs a PAPERS program on a board, one goroutine per
// PE; package launch runs one process per PE on a shared board.
package emu

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// The compiled netlist (gates, drivers, nets) is immutable; everything that
// changes — net levels, driver states, flip-flop states, port registers — is
// kept in the board's state words (see state.go), so that one simulator runs
// on ordinary memory or on a file shared by several processes.
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

// Board is an emulated board. All methods are safe for concurrent use, and a
// shared board (CreateShared, OpenShared) also across processes.
type Board struct {
	hw  *hw.Board
	pes int // PEs whose cables are plugged in at start

	st      state
	bits    []byte // the byte part of st (layout.bits)
	lay     layout
	shared  []byte // the mapping of a shared board, nil in-process
	nets    []net
	drivers []driver
	gates   []gate
	vcc     int32 // the supply drivers
	gnd     int32
	ports   []*Port
	ledNets [][2]int32

	// Written on every port write. Kept off the cache lines above, which
	// every PE's poll reads: sharing one line made each poll miss whenever
	// another PE wrote.
	_  [64]byte
	mu sync.Mutex // in-process exclusion; a shared board adds st's lock word
	// The settle's scratch, used under the lock. Every write's settle
	// touches it and each cache line it spans moves between the PEs'
	// cores, so it is one small buffer (see compile), not fields of the
	// gate, net and port structs.
	queued []int32 // bitset: the gates in queue, the nets in check (from len(gates)), the ports in dirty (from len(gates)+len(nets))
	dirty  []int32 // ports whose status needs recomputing
	check  []int32 // multi-driver nets whose drivers changed
	queue  []int32 // gates to evaluate
}

// alignedState allocates state words starting on a cache line, so that the
// layout's per-port lines really are lines of their own (a mapping of a
// shared board is page-aligned already).
func alignedState(words int) state {
	s := make(state, words+16)
	off := int(uintptr(unsafe.Pointer(&s[0]))%64) / 4
	if off != 0 {
		off = 16 - off
	}
	return s[off : off+words : off+words]
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
	b := compile(h, pes)
	b.setState(alignedState(b.lay.words))
	b.st.init(b)
	b.lock()
	defer b.unlock()
	b.powerOn()
	return b, nil
}

// compile builds the immutable simulation structures of a netlist; their
// indices are deterministic, so every process compiling the same netlist
// agrees on the state layout.
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
		p := &Port{b: b, pe: k}
		for _, l := range lpt.Lines {
			cl := cableLine{line: l, net: netOf(hw.ConnectorRef(k), l.Pin), driver: -1}
			if l.Output() {
				cl.driver = addDriver(cl.net)
				if cl.driver >= 0 {
					p.outputs = append(p.outputs, cl)
					p.outPins |= 1 << l.Pin
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
	b.lay = newLayout(h.PEs, len(b.nets), len(b.drivers), len(b.gates))
	for _, p := range b.ports {
		p.base = b.lay.port(p.pe)
	}
	// The scratch buffer in the order a settle's use reaches into it:
	// flags, then the short lists, then the gate queue (which may grow).
	multi := 0
	for i := range b.nets {
		if b.nets[i].multi {
			multi++
		}
	}
	flags := (len(b.gates) + len(b.nets) + len(b.ports) + 31) / 32
	buf := make([]int32, flags+len(b.ports)+multi+2*len(b.gates))
	b.queued, buf = buf[:flags:flags], buf[flags:]
	b.dirty, buf = buf[:0:len(b.ports)], buf[len(b.ports):]
	b.check, buf = buf[:0:multi], buf[multi:]
	b.queue = buf[:0]
	return b
}

// Settle scratch flags: gate g, net n and port k are queued in queue, check
// and dirty.
func (b *Board) flag(i int) bool      { return b.queued[i>>5]>>(i&31)&1 != 0 }
func (b *Board) setFlag(i int)        { b.queued[i>>5] |= 1 << (i & 31) }
func (b *Board) clearFlag(i int)      { b.queued[i>>5] &^= 1 << (i & 31) }
func (b *Board) netFlag(n int32) int  { return len(b.gates) + int(n) }
func (b *Board) portFlag(k int32) int { return len(b.gates) + len(b.nets) + int(k) }

// powerOn brings fresh state to the power-on levels: every port's registers
// read 0; the board settles from there.
func (b *Board) powerOn() {
	b.setDriverBits(b.vcc, true, true)
	b.setDriverBits(b.gnd, true, false)
	for i := range b.gates {
		b.setDriverBits(b.gates[i].out, true, true)
		b.setDriverBits(b.gates[i].outN, true, true)
	}
	for _, p := range b.ports {
		p.driveLocked(lpt.OutputPins(0, 0), true)
	}
	b.resettle()
}

// resettle recomputes every net from its drivers and re-evaluates every
// gate: after power-on, and after taking over the lock of a process that
// died mid-settle.
func (b *Board) resettle() {
	for i := range b.nets {
		b.setNet(int32(i), b.resolve(int32(i)))
	}
	clear(b.queued)
	b.queue, b.check, b.dirty = b.queue[:0], b.check[:0], b.dirty[:0]
	for i := range b.gates {
		if g := &b.gates[i]; g.fn == hw.FuncDFF {
			b.setClk(int32(i), b.level(g.in[1]))
		}
		b.push(int32(i))
	}
	for k := range b.ports {
		b.markStatus(int32(k))
	}
	for i := range b.nets {
		if b.nets[i].multi {
			b.setFlag(b.netFlag(int32(i)))
			b.check = append(b.check, int32(i))
		}
	}
	b.settle()
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
func (b *Board) level(n int32) bool { return n < 0 || b.bits[b.lay.nets+int(n)] != 0 }

// resolve computes a net's level from its drivers: an undriven net floats
// high; drivers that disagree (contention) pull it low, as a TTL low output
// sinks more current than a high one sources.
func (b *Board) resolve(n int32) bool {
	any, val := false, true
	for _, d := range b.nets[n].drivers {
		on, v := b.driverBits(d)
		if !on {
			continue
		}
		if any && v != val {
			return false
		}
		any, val = true, v
	}
	return val
}

func (b *Board) push(g int32) {
	if !b.flag(int(g)) {
		b.setFlag(int(g))
		b.queue = append(b.queue, g)
	}
}

// setDriver changes a driver and re-resolves its net, queueing the net's
// loads when its level changes.
func (b *Board) setDriver(d int32, on, val bool) {
	if d < 0 || !b.setDriverBits(d, on, val) {
		return
	}
	n := b.drivers[d].net
	if f := b.netFlag(n); b.nets[n].multi && !b.flag(f) {
		b.setFlag(f)
		b.check = append(b.check, n)
	}
	if v := b.resolve(n); v != b.level(n) {
		b.setNet(n, v)
		for _, g := range b.nets[n].loads {
			b.push(g)
		}
		for _, k := range b.nets[n].readers {
			b.markStatus(k)
		}
	}
}

// settle evaluates queued gates until the board is stable.
func (b *Board) settle() {
	for i := 0; i < len(b.queue); i++ {
		if i > 100000 {
			panic("emu: the board does not settle (a combinational loop in the netlist?)")
		}
		gi := b.queue[i]
		g := &b.gates[gi]
		b.clearFlag(int(gi))
		var in uint32
		for k, n := range g.in {
			if b.level(n) {
				in |= 1 << k
			}
		}
		var st hw.DFFState
		if g.fn == hw.FuncDFF {
			st = b.dff(gi)
		}
		on, out, outN, next := g.fn.Eval(in, len(g.in), g.en < 0 || b.level(g.en) != g.enLow, st)
		b.setDriver(g.out, on, out)
		if g.fn == hw.FuncDFF {
			b.setDFF(gi, next)
			b.setDriver(g.outN, true, outN)
		}
	}
	b.queue = b.queue[:0]
	// Contention that outlives the settle is a design fault; passing overlap
	// while one buffer turns on before another turns off is not. Only nets
	// whose drivers changed in this settle can have become contended.
	for _, n := range b.check {
		b.clearFlag(b.netFlag(n))
		on := 0
		var val bool
		for _, d := range b.nets[n].drivers {
			if dOn, dVal := b.driverBits(d); dOn {
				if on > 0 && dVal != val {
					b.st.add64(hContention, 1)
				}
				on, val = on+1, dVal
			}
		}
	}
	b.check = b.check[:0]
	for _, k := range b.dirty {
		b.clearFlag(b.portFlag(k))
		b.ports[k].updateStatusLocked()
	}
	b.dirty = b.dirty[:0]
}

// markStatus queues a port's status register for the end of the settle:
// only ports whose input pins changed are recomputed.
func (b *Board) markStatus(k int32) {
	if f := b.portFlag(k); !b.flag(f) {
		b.setFlag(f)
		b.dirty = append(b.dirty, k)
	}
}

// Port returns PE k's emulated printer port. A port can be held by one
// user at a time: Close it to hand it on.
func (b *Board) Port(pe int) (*Port, error) {
	if pe < 0 || pe >= len(b.ports) {
		return nil, fmt.Errorf("emu: PE %d out of range: the board has PEs 0 to %d", pe, len(b.ports)-1)
	}
	p := b.ports[pe]
	if err := b.claim(p); err != nil {
		return nil, err
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
	b.lock()
	defer b.unlock()
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
	b.lock()
	defer b.unlock()
	for i := range b.nets {
		if b.nets[i].name == name {
			return b.level(int32(i)), nil
		}
	}
	return false, fmt.Errorf("emu: no net %q on the %d-PE board", name, b.hw.PEs)
}

// Contention counts the times two enabled drivers disagreed on a net. A
// correct board never has any.
func (b *Board) Contention() uint64 {
	b.lock()
	defer b.unlock()
	return b.st.load64(hContention)
}

// explainStall names the PEs that keep a barrier at the given strobe phase
// from completing.
func (b *Board) explainStall(self int, phase uint8) string {
	b.lock()
	defer b.unlock()
	want := "S0"
	if phase == lpt.S1 {
		want = "S1"
	}
	var late []string
	for k, p := range b.ports {
		if !p.plugged() {
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
	b    *Board
	pe   int
	base int // the port's registers in the board state (portData...)
	// ops is bumped on every poll: keep it off the lines that other PEs'
	// settles read (they recompute this port's status from its fields).
	_         [64]byte
	ops       atomic.Uint64
	_         [56]byte
	lines     []cableLine
	inputs    []cableLine                // the status lines
	outputs   []cableLine                // the PC-driven lines the board connects
	outPins   lpt.Pins                   // their pins, in the order of outputs
	err       atomic.Pointer[AbortError] // the board's abort, once seen
	errCalls  atomic.Uint32
	lastCheck atomic.Int64  // Unix ns of the last liveness check
	turn      atomic.Uint32 // the partner the next liveness check looks at
}

var _ lpt.Port = (*Port)(nil)
var _ lpt.StallExplainer = (*Port)(nil)

// PE returns the connector this port is wired to.
func (p *Port) PE() int { return p.pe }

// WriteData writes the data register.
func (p *Port) WriteData(v uint8) {
	p.ops.Add(1)
	p.b.lock()
	p.set(portData, uint32(v))
	p.driveLocked(lpt.OutputPins(v, p.control()), false)
	p.b.settle()
	p.b.unlock()
}

// WriteControl writes the control register.
func (p *Port) WriteControl(v uint8) {
	p.ops.Add(1)
	p.b.lock()
	p.set(portControl, uint32(v))
	p.driveLocked(lpt.OutputPins(p.data(), v), false)
	p.b.settle()
	p.b.unlock()
}

// ReadData reads back the data register (the latch, as on an SPP port).
func (p *Port) ReadData() uint8 {
	p.ops.Add(1)
	return p.data()
}

// ReadControl reads back the control register.
func (p *Port) ReadControl() uint8 {
	p.ops.Add(1)
	return p.control()
}

// ReadStatus reads the status register.
func (p *Port) ReadStatus() uint8 {
	p.ops.Add(1)
	return uint8(p.b.st.load(p.base + portStatus))
}

// Err returns nil until the board is aborted (Board.Abort), then an
// *AbortError, for good: a board whose program has lost a PE is unusable.
func (p *Port) Err() error {
	if e := p.err.Load(); e != nil {
		return e
	}
	if p.b.st.load(hAbort) != abortSet {
		// On a shared board, look now and then for partners killed without
		// a word; the launcher aborts the board too, but it may be slow to
		// be scheduled.
		if p.b.shared == nil || p.errCalls.Add(1)%livenessEvery != 0 {
			return nil
		}
		now := time.Now().UnixNano()
		if now-p.lastCheck.Load() < int64(livenessPeriod) {
			return nil
		}
		p.lastCheck.Store(now)
		pe, reason := p.b.deadPartner(int(p.turn.Add(1)))
		if pe < 0 {
			return nil
		}
		p.b.Abort(pe, reason)
	}
	pe, reason, _ := p.b.Aborted()
	e := &AbortError{PE: pe, Reason: reason}
	if p.err.CompareAndSwap(nil, e) {
		p.b.st.atomic64(p.base + portNoticed).Store(uint64(time.Now().UnixNano()))
	}
	return p.err.Load()
}

// The driver calls Port.Err once per operation and every 64 polls while
// waiting. Every livenessEvery calls Err reads the clock, and at most every
// livenessPeriod it checks that one other PE's process (in turn) lives.
const (
	livenessEvery  = 8
	livenessPeriod = time.Millisecond
)

// Close releases the port for another user. The registers keep their values,
// as a real port's do when a program exits.
func (p *Port) Close() error {
	p.b.release(p)
	return nil
}

// Ops returns the number of port operations made on this port.
func (p *Port) Ops() uint64 { return p.ops.Load() }

// ExplainStall says which PEs keep the current barrier from completing.
func (p *Port) ExplainStall() string {
	phase := p.data() & lpt.Strobes
	if phase == lpt.Strobes || phase == 0 {
		return ""
	}
	return p.b.explainStall(p.pe, phase)
}

// driveLocked puts the PC-driven pin levels on the cable, through any faults.
func (p *Port) driveLocked(pins lpt.Pins, force bool) {
	changed := pins ^ p.pins()
	if force {
		changed = p.outPins
	}
	p.set(portPins, uint32(pins))
	if changed&p.outPins == 0 {
		return // only lines the board leaves unconnected (nSelectIn) changed
	}
	plugged, stuck0, stuck1 := p.plugged(), p.get(portStuck0), p.get(portStuck1)
	for _, cl := range p.outputs {
		if !changed.High(cl.line.Pin) {
			continue
		}
		level := pins.High(cl.line.Pin)
		level = (level || stuck1&(1<<cl.line.Pin) != 0) && stuck0&(1<<cl.line.Pin) == 0
		p.b.setDriver(cl.driver, plugged, level)
	}
}

// statusNotPins are the status register bits that are not pins.
var statusNotPins = lpt.StatusFromPins(0) &^ lpt.StatusPins

// updateStatusLocked recomputes the status register from the cable's input
// pins. Inputs of an unplugged cable float high at the PC.
func (p *Port) updateStatusLocked() {
	status := statusNotPins
	plugged, stuck0, stuck1 := p.plugged(), p.get(portStuck0), p.get(portStuck1)
	for _, cl := range p.inputs {
		level := !plugged || p.b.level(cl.net)
		level = (level || stuck1&(1<<cl.line.Pin) != 0) && stuck0&(1<<cl.line.Pin) == 0
		if level != cl.line.Inverted {
			status |= cl.line.Mask
		}
	}
	p.b.st.store(p.base+portStatus, uint32(status))
}
