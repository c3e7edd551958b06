package emu

import (
	"math/bits"
	"unsafe"

	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// sim is one evaluator's private simulation of the board: every net's
// level, every driver's state and every flip-flop's state, computed from a
// snapshot of the board's memory. Each port keeps one in its own process's
// memory (and the Board one for inspection and faults), so no evaluator
// ever waits for another: a write is applied to the pins it changed and
// the board settles event by event from there, each unit's logic stated
// once by hw.Func.Eval.
//
// Zero-delay semantics: combinational gates settle first; a flip-flop
// samples its inputs once the logic in front of it has settled (it never
// sees a glitch of the evaluation order), and its outputs then settle the
// logic they drive. The result depends only on the pins and the flip-flops'
// previous state, so evaluators that skipped different snapshots agree.
type sim struct {
	b      *Board
	pe     int     // the port it evaluates for, -1 for the board's own
	bits   []byte  // net levels, then driver states (bit 0 on, bit 1 level)
	dff    []uint8 // each flip-flop's state: bit 0 Q, bit 1 last clock level
	status []uint8 // each connector's status register
	// out is every connector's status as the last evaluation found it:
	// the simulation's, or its memo's, which leaves the simulation behind.
	out  []uint8
	memo *memo // a port's on a lock-free board; nil for the board's own

	words  []uint64 // the inputs applied: port words, fault words, the power word
	ignore []uint64 // by port: the bits of its word this simulation ignores
	dffW   uint64   // the committed flip-flop word the states derive from (0: none)
	t      uint64   // T of the applied snapshot
	built  bool     // rebuilt once: levels are consistent with words

	// powering makes the next settle a power-up: each flip-flop takes the
	// power-up Q and, as its last clock level, the level its clock input
	// settles to (so no edge is seen at power-on).
	powering  bool
	contended int // multi-driver nets whose drivers disagree now

	// Settle scratch: flags (gates queued, gates deferred, nets checked,
	// nets contended, ports dirty), then the lists they mark.
	flags    []uint32
	queue    []int32 // gates to evaluate
	deferred []int32 // flip-flops to evaluate once the logic has settled
	check    []int32 // multi-driver nets whose drivers changed
	dirty    []int32 // ports whose status needs recomputing

	// Collect scratch.
	snap, snap2 []uint64
}

func newSim(b *Board, pe int) *sim {
	size := len(b.ports)
	s := &isolated[sim](1)[0]
	*s = sim{b: b, pe: pe,
		bits:     isolated[byte](len(b.nets) + len(b.drivers)),
		dff:      isolated[uint8](len(b.dffs)),
		status:   isolated[uint8](size),
		out:      isolated[uint8](size),
		words:    isolated[uint64](2*size + 1),
		snap:     isolated[uint64](2*size + 1),
		snap2:    isolated[uint64](2*size + 1),
		flags:    isolated[uint32]((2*len(b.gates) + 2*len(b.nets) + size + 31) / 32),
		queue:    isolated[int32](2 * len(b.gates))[:0],
		ignore:   isolated[uint64](size),
		deferred: isolated[int32](len(b.dffs))[:0],
		check:    isolated[int32](len(b.nets))[:0],
		dirty:    isolated[int32](size)[:0],
	}
	return s
}

// isolated allocates n elements with a cache line of slack on either side:
// the evaluators of PEs running on different CPUs write their scratch all
// the time, and small allocations made one after the other would otherwise
// share cache lines (false sharing) and move between the CPUs at every
// write.
func isolated[T any](n int) []T {
	var zero T
	pad := (8*lineWords + int(unsafe.Sizeof(zero)) - 1) / int(unsafe.Sizeof(zero))
	return make([]T, n+2*pad)[pad : pad+n : pad+n]
}

// ignoreInert makes the simulation ignore the inert bits of every port
// word: a port's simulation needs no LED levels.
func (s *sim) ignoreInert() {
	for k, p := range s.b.ports {
		s.ignore[k] = p.inertBits
	}
}

// Flag indices.
func (s *sim) deferFlag(g int32) int { return len(s.b.gates) + int(g) }
func (s *sim) checkFlag(n int32) int { return 2*len(s.b.gates) + int(n) }
func (s *sim) contFlag(n int32) int  { return 2*len(s.b.gates) + len(s.b.nets) + int(n) }
func (s *sim) dirtyFlag(k int32) int { return 2*len(s.b.gates) + 2*len(s.b.nets) + int(k) }

func (s *sim) flag(i int) bool { return s.flags[i>>5]>>(i&31)&1 != 0 }
func (s *sim) setFlag(i int)   { s.flags[i>>5] |= 1 << (i & 31) }
func (s *sim) clearFlag(i int) { s.flags[i>>5] &^= 1 << (i & 31) }

// level is a net's level: unconnected inputs float high.
func (s *sim) level(n int32) bool { return n < 0 || s.bits[n] != 0 }

func (s *sim) setNet(n int32, v bool) { s.bits[n] = byte(bit(v)) }

func (s *sim) driverBits(d int32) (on, val bool) {
	w := s.bits[len(s.b.nets)+int(d)]
	return w&1 != 0, w&2 != 0
}

// setDriverBits stores a driver's state and reports whether it changed.
func (s *sim) setDriverBits(d int32, on, val bool) bool {
	if d < 0 {
		return false
	}
	w := byte(bit(on) | bit(val)<<1)
	i := len(s.b.nets) + int(d)
	if s.bits[i] == w {
		return false
	}
	s.bits[i] = w
	return true
}

func bit(v bool) uint32 {
	if v {
		return 1
	}
	return 0
}

// resolve computes a net's level from its drivers: an undriven net floats
// high; drivers that disagree (contention) pull it low, as a TTL low output
// sinks more current than a high one sources.
func (s *sim) resolve(n int32) bool {
	any, val := false, true
	for _, d := range s.b.nets[n].Drivers {
		on, v := s.driverBits(d)
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

// disagree reports whether a net's enabled drivers disagree.
func (s *sim) disagree(n int32) bool {
	any, val := false, false
	for _, d := range s.b.nets[n].Drivers {
		if on, v := s.driverBits(d); on {
			if any && v != val {
				return true
			}
			any, val = true, v
		}
	}
	return false
}

func (s *sim) push(g int32) {
	if !s.flag(int(g)) {
		s.setFlag(int(g))
		s.queue = append(s.queue, g)
	}
}

// setDriver changes a driver and re-resolves its net, queueing the net's
// loads when its level changes.
func (s *sim) setDriver(d int32, on, val bool) {
	if d < 0 || !s.setDriverBits(d, on, val) {
		return
	}
	n := s.b.drivers[d].Net
	if f := s.checkFlag(n); s.b.nets[n].Multi && !s.flag(f) {
		s.setFlag(f)
		s.check = append(s.check, n)
	}
	if v := s.resolve(n); v != s.level(n) {
		s.setNet(n, v)
		for _, g := range s.b.nets[n].Loads {
			s.push(g)
		}
		for _, k := range s.b.nets[n].Readers {
			s.markStatus(k)
		}
	}
}

// markStatus queues a port's status register for the end of the settle:
// only ports whose input pins changed are recomputed.
func (s *sim) markStatus(k int32) {
	if f := s.dirtyFlag(k); !s.flag(f) {
		s.setFlag(f)
		s.dirty = append(s.dirty, k)
	}
}

// settleLimit bounds a settle: beyond it the netlist has a combinational
// loop.
const settleLimit = 100000

// settle evaluates queued gates until the board is stable: the
// combinational logic first, then the flip-flops whose inputs or state
// changed, then what their outputs drive, and so on.
func (s *sim) settle() {
	evals := 0
	for {
		for i := 0; i < len(s.queue); i++ {
			if evals++; evals > settleLimit {
				panic("emu: the board does not settle (a combinational loop in the netlist?)")
			}
			gi := s.queue[i]
			s.clearFlag(int(gi))
			if s.b.gates[gi].Fn == hw.FuncDFF {
				if f := s.deferFlag(gi); !s.flag(f) {
					s.setFlag(f)
					s.deferred = append(s.deferred, gi)
				}
				continue
			}
			s.eval(gi)
		}
		s.queue = s.queue[:0]
		if len(s.deferred) == 0 {
			break
		}
		for _, gi := range s.deferred {
			s.clearFlag(s.deferFlag(gi))
			s.eval(gi)
		}
		s.deferred = s.deferred[:0]
	}
	s.powering = false
	for _, n := range s.check {
		s.clearFlag(s.checkFlag(n))
		if now, f := s.disagree(n), s.contFlag(n); now != s.flag(f) {
			if now {
				s.setFlag(f)
				s.contended++
			} else {
				s.clearFlag(f)
				s.contended--
			}
		}
	}
	s.check = s.check[:0]
	for _, k := range s.dirty {
		s.clearFlag(s.dirtyFlag(k))
		s.status[k] = s.portStatus(int(k))
	}
	s.dirty = s.dirty[:0]
}

// eval evaluates one gate with hw.Func.Eval and drives its outputs.
func (s *sim) eval(gi int32) {
	g := &s.b.gates[gi]
	var in uint32
	for k, n := range g.In {
		if s.level(n) {
			in |= 1 << k
		}
	}
	var st hw.DFFState
	i := s.b.dffOf[gi]
	if i >= 0 {
		st = hw.DFFState{Q: s.dff[i]&1 != 0, Clk: s.dff[i]&2 != 0}
		if s.powering {
			st.Clk = in&2 != 0
		}
	}
	on, out, outN, next := g.Fn.Eval(in, len(g.In), g.En < 0 || s.level(g.En) != g.EnLow, st)
	s.setDriver(g.Out, on, out)
	if i >= 0 {
		s.dff[i] = uint8(bit(next.Q) | bit(next.Clk)<<1)
		s.setDriver(g.OutN, true, outN)
	}
}

// statusNotPins are the status register bits that are not pins.
var statusNotPins = lpt.StatusFromPins(0) &^ lpt.StatusPins

// portStatus computes connector k's status register from its input pins.
// Inputs of an unplugged cable float high at the PC; a stuck input line is
// seen by that PC only.
func (s *sim) portStatus(k int) uint8 {
	plugged, stuck0, stuck1 := faultInfo(s.words[len(s.b.ports)+k])
	status := statusNotPins
	for _, cl := range s.b.ports[k].inputs {
		level := !plugged || s.level(cl.Net)
		level = (level || stuck1&(1<<cl.Line.Pin) != 0) && stuck0&(1<<cl.Line.Pin) == 0
		if level != cl.Line.Inverted {
			status |= cl.Line.Mask
		}
	}
	return status
}

// drive puts connector k's PC-driven pin levels on the cable, through its
// faults: only the pins that changed, or all of them when force is set.
func (s *sim) drive(k int, pins, old lpt.Pins, force bool) {
	p := s.b.ports[k]
	changed := pins ^ old
	if force {
		changed = p.outPins
	}
	if changed&p.outPins == 0 {
		return
	}
	plugged, stuck0, stuck1 := faultInfo(s.words[len(s.b.ports)+k])
	for c := changed & p.outPins; c != 0; c &= c - 1 {
		pin := bits.TrailingZeros32(uint32(c))
		level := pins.High(pin)
		level = (level || stuck1&(1<<pin) != 0) && stuck0&(1<<pin) == 0
		s.setDriver(p.outDriver[pin], plugged, level)
	}
}

// apply brings the simulation to the inputs in words (a snapshot) and the
// flip-flop states in state, and settles. Only connectors whose words
// changed are driven again, and only flip-flops whose state differs are
// re-evaluated.
func (s *sim) apply(words []uint64, state uint8) {
	size := len(s.b.ports)
	ports, faults := words[:size], words[size:][:size]
	oports, ofaults := s.words[:size], s.words[size:][:size]
	for k, pw := range ports {
		fw, opw, ofw := faults[k], oports[k], ofaults[k]
		if pw == opw && fw == ofw {
			continue
		}
		s.words[k], s.words[size+k] = pw, fw
		force := fw>>faultSeqShift != ofw>>faultSeqShift
		s.drive(k, lpt.OutputPins(wordData(pw), wordControl(pw)), lpt.OutputPins(wordData(opw), wordControl(opw)), force)
		if force {
			s.markStatus(int32(k))
		}
	}
	s.words[2*size] = words[2*size]
	s.loadState(state)
	s.settle()
}

// loadState sets the flip-flops to state, queueing those that change.
func (s *sim) loadState(state uint8) {
	for i, g := range s.b.dffs {
		if st := state >> (2 * i) & 3; st != s.dff[i] || s.powering {
			s.dff[i] = st
			s.push(g)
		}
	}
}

// state packs the flip-flops' states for the flip-flop word.
func (s *sim) state() uint8 {
	var st uint8
	for i, v := range s.dff {
		st |= v << (2 * i)
	}
	return st
}

// q returns each flip-flop's Q, bit i for flip-flop i.
func (s *sim) q() uint8 { return qBits(s.state()) }

// qBits returns the Q bits of a packed flip-flop state (bits 0, 2, 4 and
// 6: the state is a byte, maxFlipFlops at most 4), bit i for flip-flop i.
func qBits(state uint8) uint8 {
	return state&1 | state>>1&2 | state>>2&4 | state>>3&8
}

// rebuild computes everything from scratch: after power-on, and for an
// evaluator that has seen nothing yet. Drivers of the supply and of every
// pin are set, every net resolved, every gate evaluated.
func (s *sim) rebuild(words []uint64, state uint8) {
	b := s.b
	clear(s.bits)
	clear(s.flags)
	s.queue, s.deferred, s.check, s.dirty = s.queue[:0], s.deferred[:0], s.check[:0], s.dirty[:0]
	s.contended = 0
	s.setDriverBits(b.vcc, true, true)
	s.setDriverBits(b.gnd, true, false)
	for i := range b.gates {
		s.setDriverBits(b.gates[i].Out, true, true)
		s.setDriverBits(b.gates[i].OutN, true, true)
	}
	size := len(b.ports)
	copy(s.words, words)
	for k := 0; k < size; k++ {
		s.drive(k, lpt.OutputPins(wordData(words[k]), wordControl(words[k])), 0, true)
	}
	for i := range b.nets {
		s.setNet(int32(i), s.resolve(int32(i)))
		if b.nets[i].Multi && !s.flag(s.checkFlag(int32(i))) {
			s.setFlag(s.checkFlag(int32(i)))
			s.check = append(s.check, int32(i))
		}
	}
	for i := range s.dff {
		s.dff[i] = state >> (2 * i) & 3
	}
	for i := range b.gates {
		s.push(int32(i))
	}
	for k := range b.ports {
		s.markStatus(int32(k))
	}
	s.settle()
}
