package emu

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ttlpapers/ttlpapers/lpt"
)

// Port is one PE's emulated SPP printer port. It implements lpt.Port,
// lpt.StallExplainer and lpt.Waiter. Its methods are meant to be called from
// one goroutine (the PE).
type Port struct {
	b       *Board
	pe      int
	lines   []cableLine
	inputs  []cableLine // the status lines
	outputs []cableLine // the PC-driven lines the board connects
	outPins lpt.Pins    // their pins, in the order of outputs
	// outDriver is the board's driver for each output pin (by DB-25 pin).
	outDriver [32]int32
	inert     lpt.Pins // output pins that no state or status depends on
	// inertBits are the register bits that drive only inert pins: a write
	// that changes only these keeps its sequence number and is evaluated
	// by nobody; ports' own simulations never look at them.
	inertBits uint64
	// extBits are the status bits whose logic reads other ports' pins
	// without a flip-flop between (the NAND inputs); the others change
	// only with the flip-flops, faults, power-ups or this port's writes.
	extBits uint8

	sim   *sim // this port's evaluator, in this process (none on a locked board)
	held  bool // claimed by this process
	reads uint32
	// The status as last evaluated, and the flip-flop word it derives from.
	dffW  uint64
	st    uint8
	lastQ uint8

	ops       atomic.Uint64
	err       atomic.Pointer[AbortError] // the board's abort, once seen
	errCalls  uint32
	lastCheck int64  // Unix ns of the last liveness check
	turn      uint32 // the partner the next liveness check looks at

	// In-process boards: Wait's wake-up, its timer for short sleeps, and
	// the done channel a goroutine watches for it (watch).
	wake      chan struct{}
	timer     *time.Timer
	watched   <-chan struct{}
	stopWatch chan struct{}
}

var (
	_ lpt.Port           = (*Port)(nil)
	_ lpt.StallExplainer = (*Port)(nil)
	_ lpt.Waiter         = (*Port)(nil)
)

// PE returns the connector this port is wired to.
func (p *Port) PE() int { return p.pe }

// WriteData writes the data register.
func (p *Port) WriteData(v uint8) {
	defer p.b.survive(p.b.guard())
	p.ops.Add(1)
	p.write(func(w uint64) (uint8, uint8) { return v, wordControl(w) })
}

// WriteControl writes the control register.
func (p *Port) WriteControl(v uint8) {
	defer p.b.survive(p.b.guard())
	p.ops.Add(1)
	p.write(func(w uint64) (uint8, uint8) { return wordData(w), v })
}

// write publishes the registers in the port's word (one atomic operation),
// then evaluates the board unless only inert pins changed. On a locked
// board a write that reaches the logic does both under the lock; one that
// does not needs no lock, since nothing is evaluated.
func (p *Port) write(regs func(w uint64) (data, control uint8)) {
	b, i := p.b, p.b.lay.port(p.pe)
	held := false
	for {
		old := b.m.load(i)
		data, control := regs(old)
		nw := portWord(old>>seqShift, data, control)
		relevant := (nw^old)&0xffff&^p.inertBits != 0
		if relevant && b.locked && !held {
			b.mu.Lock()
			held = true
			continue
		}
		if relevant {
			nw += seqOne
		}
		if !b.m.cas(i, old, nw) {
			continue
		}
		if pause != nil {
			pause(p.pe, afterStore)
		}
		switch {
		case held:
			var wake uint32
			if relevant { // (a reset under it may have made it inert)
				wake = b.settlePort(p.pe, nw)
			}
			b.mu.Unlock()
			b.wake(wake)
		case relevant:
			p.refreshAfter(nw)
		}
		return
	}
}

// ReadData reads back the data register (the latch, as on an SPP port).
func (p *Port) ReadData() uint8 {
	defer p.b.survive(p.b.guard())
	p.ops.Add(1)
	return wordData(p.b.m.load(p.b.lay.port(p.pe)))
}

// ReadControl reads back the control register.
func (p *Port) ReadControl() uint8 {
	defer p.b.survive(p.b.guard())
	p.ops.Add(1)
	return wordControl(p.b.m.load(p.b.lay.port(p.pe)))
}

// ReadStatus reads the status register: the board as it stands after every
// write completed before the call.
func (p *Port) ReadStatus() uint8 {
	defer p.b.survive(p.b.guard())
	p.ops.Add(1)
	return p.status()
}

// status is the port's status register. Every write that reaches the
// logic commits a new flip-flop word (its T changes, whatever the state),
// so while that word is the one the port's simulation comes from, no write
// has completed since and the status stands: one load. A write stored but
// not yet committed (its writer stopped in between) is found by the full
// look every fullLookEvery reads, and by Wait before it sleeps. A locked
// board's port reads its status word: every write stored there what it
// changed before it returned.
func (p *Port) status() uint8 {
	if p.b.locked {
		x := p.b.m.load(p.b.lay.per(p.pe, pStatus))
		p.st, p.lastQ = uint8(x), uint8(x>>8)
		return p.st
	}
	w := p.b.m.load(hDFF)
	if w == p.dffW {
		if p.fullLook() {
			p.refresh()
		}
		return p.st
	}
	if !p.adopt(w) {
		p.refresh()
	}
	return p.st
}

// fullLook counts a read and says when its turn has come to look at every
// input word.
func (p *Port) fullLook() bool {
	p.reads++
	return p.reads%fullLookEvery == 0
}

// refresh evaluates the board for this port and caches its status.
func (p *Port) refresh() { p.refreshAfter(0) }

// refreshAfter is refresh right after this port stored word (0: no
// store). A locked board is always up to date.
func (p *Port) refreshAfter(word uint64) {
	b, s := p.b, p.sim
	switch {
	case b.locked:
		p.status()
		return
	case word != 0:
		b.evaluateAfter(s, p.pe, word)
	default:
		b.evaluate(s)
	}
	p.dffW, p.st, p.lastQ = s.dffW, s.out[p.pe], qBits(dffState(s.dffW))
}

// fullLookEvery paces the reads that collect every input word.
const fullLookEvery = 16

// Err returns nil until the board is aborted (Board.Abort), then an
// *AbortError, for good: a board whose program has lost a PE is unusable.
func (p *Port) Err() error {
	if e := p.err.Load(); e != nil {
		return e
	}
	if err := p.b.err(); err != nil {
		return err
	}
	defer p.b.survive(p.b.guard())
	if p.b.m.load(hAbort) == 0 {
		// On a shared board, look now and then for partners killed without
		// a word; the launcher aborts the board too, but it may be slow to
		// be scheduled.
		if p.b.shared == nil {
			return nil
		}
		if p.errCalls++; p.errCalls%livenessEvery != 0 || !p.checkPartner() {
			return p.b.err()
		}
	}
	pe, reason, _ := p.b.Aborted()
	e := &AbortError{PE: pe, Reason: reason}
	if p.err.CompareAndSwap(nil, e) {
		p.b.m.store(p.b.lay.per(p.pe, pNoticed), uint64(time.Now().UnixNano()))
	}
	return p.err.Load()
}

// checkPartner checks one other PE's process, at most every
// livenessPeriod, aborting the board if it died holding its port, and that
// the board's file is whole. It reports whether the board is aborted.
func (p *Port) checkPartner() bool {
	now := time.Now().UnixNano()
	if now-p.lastCheck < int64(livenessPeriod) {
		return false
	}
	p.lastCheck = now
	if p.b.checkFile(); p.b.err() != nil {
		return false
	}
	p.turn++
	pe, reason := p.b.deadPartner(int(p.turn))
	if pe < 0 {
		return false
	}
	p.b.Abort(pe, reason)
	return true
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
	defer p.b.survive(p.b.guard())
	if p.held {
		p.held = false
		p.b.claimed.Add(-1)
	}
	p.unwatch()
	p.b.release(p)
	return nil
}

// Ops returns the number of port operations made on this port.
func (p *Port) Ops() uint64 { return p.ops.Load() }

// ExplainStall says which PEs keep the current barrier from completing, and
// records them for the board's PortInfo (a launcher names them).
func (p *Port) ExplainStall() string {
	defer p.b.survive(p.b.guard())
	phase := wordData(p.b.m.load(p.b.lay.port(p.pe))) & lpt.Strobes
	if phase == lpt.Strobes || phase == 0 {
		return ""
	}
	var why string
	var late uint64
	p.b.look(func(s *sim) { why, late = p.b.explainStall(s, p.pe, phase) })
	p.b.m.store(p.b.lay.per(p.pe, pStalledAt), uint64(time.Now().UnixNano()))
	p.b.m.store(p.b.lay.per(p.pe, pStalled), late+1)
	return why
}

// explainStall names the PEs that keep a barrier at the given strobe phase
// from completing, and returns them as a mask too.
func (b *Board) explainStall(s *sim, self int, phase uint8) (string, uint64) {
	want := "S0"
	if phase == lpt.S1 {
		want = "S1"
	}
	var why []string
	var late uint64
	for k, p := range b.ports {
		if plugged, _, _ := faultInfo(s.words[len(b.ports)+k]); !plugged {
			continue
		}
		var st uint8
		for _, cl := range p.lines {
			if (cl.Line.Mask == lpt.S0 || cl.Line.Mask == lpt.S1) && cl.Line.Reg == lpt.Data && s.level(cl.Net) {
				st |= cl.Line.Mask
			}
		}
		switch {
		case st == 0:
			why = append(why, fmt.Sprintf("PE %d holds S0=S1=0 (stalling every barrier: not started, closed, or raising an interrupt)", k))
			late |= 1 << k
		case st&phase == 0:
			why = append(why, fmt.Sprintf("PE %d has not arrived (its strobes do not show %s)", k, want))
			late |= 1 << k
		}
	}
	if len(why) == 0 {
		return fmt.Sprintf("every plugged PE shows %s, yet PE %d has not seen ready: check its Busy line", want, self), 0
	}
	return strings.Join(why, "; "), late
}
