package timed

import (
	"fmt"
	"time"

	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// tevent is a scheduled change of a driver, or of a PC's status input.
type tevent struct {
	at  time.Duration
	seq uint64 // ties at one instant run in the order they were scheduled
	idx int32
	pc  bool
	to  uint8
	gen uint32 // stale when the target has been rescheduled since
}

// eventQueue is a binary heap of events by time, then order of scheduling.
type eventQueue struct {
	ev  []tevent
	seq uint64
}

func (q *eventQueue) before(i, j int) bool {
	a, b := &q.ev[i], &q.ev[j]
	return a.at < b.at || a.at == b.at && a.seq < b.seq
}

func (q *eventQueue) push(e tevent) {
	e.seq = q.seq
	q.seq++
	q.ev = append(q.ev, e)
	for i := len(q.ev) - 1; i > 0; {
		parent := (i - 1) / 2
		if !q.before(i, parent) {
			break
		}
		q.ev[i], q.ev[parent] = q.ev[parent], q.ev[i]
		i = parent
	}
}

func (q *eventQueue) pop() tevent {
	top := q.ev[0]
	last := len(q.ev) - 1
	q.ev[0] = q.ev[last]
	q.ev = q.ev[:last]
	for i := 0; ; {
		small, l, r := i, 2*i+1, 2*i+2
		if l < last && q.before(l, small) {
			small = l
		}
		if r < last && q.before(r, small) {
			small = r
		}
		if small == i {
			return top
		}
		q.ev[i], q.ev[small] = q.ev[small], q.ev[i]
		i = small
	}
}

// levelOf is a gate input's level: unconnected inputs float high.
func (b *Board) levelOf(n int32) bool { return n < 0 || b.level[n] }

// resolve computes a net's level from its drivers, by the untimed board's
// rule: undriven floats high, drivers that disagree pull it low.
func (b *Board) resolve(n int32) bool {
	any, val := false, true
	for _, d := range b.nets[n].drivers {
		st := b.drv[d].cur
		if st&on == 0 {
			continue
		}
		if v := st&high != 0; any && v != val {
			return false
		} else {
			any, val = true, v
		}
	}
	return val
}

// evaluate re-evaluates gate gi after its input net trigger changed (-1 at
// power-up) and schedules its outputs after the delay of the path the
// change took: clock-to-output for a flip-flop's clock, enable-to-output
// for a buffer's enable, input-to-output otherwise.
func (b *Board) evaluate(gi, trigger int32) {
	g := &b.gates[gi]
	var in uint32
	for i, n := range g.in {
		if b.levelOf(n) {
			in |= 1 << i
		}
	}
	driving, out, outN, next := g.fn.Eval(in, len(g.in), g.en < 0 || b.levelOf(g.en) != g.enLow, b.dff[gi])
	delay := g.delay
	switch {
	case trigger < 0:
	case g.fn == hw.FuncDFF && trigger == g.in[1]:
		delay = g.clock
	case trigger == g.en:
		delay = g.enable
	}
	if g.fn == hw.FuncDFF {
		b.dff[gi] = next
		b.scheduleDriver(g.outN, drive(true, outN), delay)
	}
	b.scheduleDriver(g.out, drive(driving, out), delay)
}

func (b *Board) scheduleDriver(d int32, to uint8, delay time.Duration) {
	if d >= 0 {
		b.schedule(&b.drv[d], d, false, to, delay)
	}
}

// schedule sends a driver or a PC input towards a new state after delay,
// inertially: a change back to the current state before the pending one
// happened cancels it.
func (b *Board) schedule(st *tstate, idx int32, pc bool, to uint8, delay time.Duration) {
	if st.proj == to {
		return
	}
	st.gen++
	st.proj = to
	if st.cur == to {
		return
	}
	if b.zero {
		delay = 0
	}
	b.q.push(tevent{at: b.now + delay, idx: idx, pc: pc, to: to, gen: st.gen})
}

// step applies the earliest event.
func (b *Board) step() {
	e := b.q.pop()
	b.now = e.at
	if e.pc {
		st := &b.pcIn[e.idx]
		if e.gen == st.gen {
			st.cur = e.to
			if b.rec != nil {
				b.rec.line(b.now, int(e.idx)/len(lpt.Lines), int(e.idx)%len(lpt.Lines), e.to&high != 0)
			}
		}
		return
	}
	st := &b.drv[e.idx]
	if e.gen != st.gen {
		return
	}
	st.cur = e.to
	n := b.drvNet[e.idx]
	v := b.resolve(n)
	if v == b.level[n] {
		return
	}
	b.level[n] = v
	if b.rec != nil {
		b.rec.net(b.now, n, v)
	}
	for _, g := range b.nets[n].loads {
		b.evaluate(g, n)
	}
	for _, i := range b.nets[n].pcIns {
		b.schedule(&b.pcIn[i], i, true, drive(true, v), b.inWait[i])
	}
}

// runUntil applies every event up to and including time t, and moves the
// clock to t.
func (b *Board) runUntil(t time.Duration) {
	for len(b.q.ev) > 0 && b.q.ev[0].at <= t {
		b.step()
	}
	b.now = max(b.now, t)
}

// quietLimit bounds a settle: the netlist has no loops, so a board that
// keeps changing is a bug, not a circuit.
const quietLimit = 1 << 22

// runQuiet applies events until none is left.
func (b *Board) runQuiet() {
	for n := 0; len(b.q.ev) > 0; n++ {
		if n > quietLimit {
			panic("timed: the timed board does not settle (a combinational loop in the netlist?)")
		}
		b.step()
	}
}

// write sets PE k's data and control registers now: the PC's pins change
// at once, the board sees each line after its cable's delay.
func (b *Board) write(k int, data, control uint8) {
	p := &b.ports[k]
	p.data, p.control = data, control
	pins := lpt.OutputPins(data, control)
	changed := pins ^ p.pins
	p.pins = pins
	if changed == 0 {
		return
	}
	if b.rec != nil {
		for i, l := range lpt.Lines {
			if changed.High(l.Pin) {
				b.rec.line(b.now, k, i, pins.High(l.Pin))
			}
		}
	}
	if !p.plugged {
		return
	}
	for _, l := range p.outs {
		pin := lpt.Lines[l.line].Pin
		if !changed.High(pin) {
			continue
		}
		delay := l.fall
		if pins.High(pin) {
			delay = l.rise
		}
		b.scheduleDriver(l.driver, drive(true, pins.High(pin)), delay)
	}
}

// status is the status register PE k reads now, from the levels at the PC
// end of its cable (an unplugged cable's inputs float high).
func (b *Board) status(k int) uint8 {
	var pins lpt.Pins
	for i, l := range lpt.Lines {
		if l.Reg == lpt.Status && b.pcIn[k*len(lpt.Lines)+i].cur&high != 0 {
			pins |= 1 << l.Pin
		}
	}
	return lpt.StatusFromPins(pins)
}

// Now returns the simulated time: how long since power-up.
func (b *Board) Now() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.now
}

// Netlist returns the board's hw netlist.
func (b *Board) Netlist() *hw.Netlist { return b.h }

// NetNames returns the names of the nets, in the order Levels reports them
// (the same as the untimed Board's).
func (b *Board) NetNames() []string {
	names := make([]string, len(b.nets))
	for i := range b.nets {
		names[i] = b.nets[i].name
	}
	return names
}

// Levels returns every net's level at the current simulated time, indexed
// like NetNames, reusing dst's storage.
func (b *Board) Levels(dst []bool) []bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append(dst[:0], b.level...)
}

// NetLevel returns the level of a named net now.
func (b *Board) NetLevel(name string) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := range b.nets {
		if b.nets[i].name == name {
			return b.level[i], nil
		}
	}
	return false, fmt.Errorf("timed: no net %q on the %d-PE board", name, b.h.PEs)
}
