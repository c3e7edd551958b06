package emu

import (
	"math/bits"
	"runtime"
	"sync/atomic"
	"time"
)

// Waiting. A port that waits polls a little, then gives its CPU away: with
// more PEs than CPUs it yields a few times first (the PE it waits for may
// be queued behind it), then sleeps — on a futex in the shared mapping for
// a board shared between processes, on a channel in-process — until a
// write that may change what it reads wakes it, or a short timeout passes.
// Writers wake only ports that sleep (one load of the sleepers word when
// nobody does), and only those whose awaited status bits or flip-flops
// changed. A writer stopped between its write and its wake-up call delays a
// sleeper by the timeout, no more: the sleeper then evaluates the board
// itself.
const (
	spinFor         = 50 * time.Microsecond // uncrowded: poll this long before sleeping
	spinChecks      = 256                   // and read the clock, and yield, every so many polls
	yieldsShared    = 64                    // crowded, between processes: yield this often before sleeping
	yieldsInProcess = 16                    // crowded, in-process
	maxBlock        = 2 * time.Millisecond  // the longest a sleeper sleeps between looks
	sleepRec        = uint64(1) << 63       // a sleep record is set
)

// Wait blocks until the status bits in mask may differ from those in last,
// or a flip-flop changed (the interrupt flag is raised or cleared), or the
// board was aborted, or timeout passed, or done closed. It implements
// lpt.Waiter.
func (p *Port) Wait(last, mask uint8, timeout time.Duration, done <-chan struct{}) bool {
	defer p.b.survive(p.b.guard())
	w := waiting{p: p, last: last, mask: mask, q: p.lastQ}
	if w.spin(timeout) {
		return true
	}
	// The spin took at most spinFor: sleep for what may be left, and the
	// caller's deadline check says the rest.
	d := min(timeout-spinFor, maxBlock)
	if d <= 0 {
		return false
	}
	return w.sleep(d, done)
}

// waiting is one call of Wait: what the PE waits for.
type waiting struct {
	p          *Port
	last, mask uint8
	q          uint8 // the flip-flops' Q bits the PE last saw
}

// changed reports whether what the PE waits for may have changed.
func (w *waiting) changed() bool {
	p, b := w.p, w.p.b
	if b.m.load(hAbort) != 0 || b.broken.Load() != nil {
		return true
	}
	// Bits that only the flip-flops and this port's own lines can change
	// need no evaluation while the flip-flops, faults and power-ups stand
	// (the full look every few reads still comes).
	if w.mask&p.extBits == 0 && b.m.load(hDFF)&0xffff == p.dffW&0xffff && !p.fullLook() {
		return false
	}
	st := p.status()
	return (st^w.last)&w.mask != 0 || p.lastQ != w.q
}

// spin waits without sleeping. Crowded, it yields the CPU a few times (the
// PE it waits for may be queued behind it). Otherwise it polls, yielding
// now and then: a partner on another CPU arrives within microseconds, and
// an unrelated process that wants this CPU gets it.
func (w *waiting) spin(timeout time.Duration) bool {
	b := w.p.b
	if b.crowded() {
		for range b.yields() {
			if b.yield(); w.changed() {
				return true
			}
		}
		return w.changed()
	}
	var start time.Time // read at the first yield: most waits end before
	for i := 1; ; i++ {
		if w.changed() {
			return true
		}
		if i%spinChecks == 0 {
			if start.IsZero() {
				start = time.Now()
			} else if time.Since(start) >= min(spinFor, timeout) {
				return false
			}
			b.yield()
		}
	}
}

// sleep registers the PE as sleeping and blocks for at most d; a writer
// whose commit changes what it waits for wakes it.
func (w *waiting) sleep(d time.Duration, done <-chan struct{}) bool {
	p, b := w.p, w.p.b
	p.refresh() // every input, before sleeping: no missed write
	k := p.pe
	bit := uint32(1) << k
	b.m.store(b.lay.per(k, pSleep), sleepRec|sleepRecord(w.last, w.mask, w.q))
	select {
	case <-p.wake: // a wake-up meant for an earlier wait
	default:
	}
	gen := b.gen(k)
	b.orSleepers(bit)
	if p.refresh(); w.changed() { // a write between our look and our registration
		b.andSleepers(^bit)
		return true
	}
	woke := b.block(p, gen, d, done)
	b.andSleepers(^bit)
	if !woke && b.shared != nil {
		p.checkPartner()
	}
	p.refresh()
	return woke || w.changed()
}

// crowded reports whether more PEs run than CPUs can: then a waiting PE
// should give its CPU to the PE it waits for at once.
func (b *Board) crowded() bool {
	if b.shared != nil {
		return int(b.m.load(hPEs)) > runtime.NumCPU()
	}
	return b.claimed.Load() > atomic.LoadInt32(&b.procs)
}

// yields is how often a crowded waiter yields before it sleeps: the PE it
// waits for may be queued behind it on this CPU. In-process a yield
// (runtime.Gosched) costs less than parking the goroutine and waking it.
func (b *Board) yields() int {
	if b.shared != nil {
		return yieldsShared
	}
	return yieldsInProcess
}

func (b *Board) yield() {
	if b.shared != nil {
		schedYield() // another process may need this CPU
		return
	}
	runtime.Gosched()
}

func (b *Board) orSleepers(bit uint32)  { atomic.OrUint32(b.m.u32(hSleepers), bit) }
func (b *Board) andSleepers(bit uint32) { atomic.AndUint32(b.m.u32(hSleepers), bit) }

// gen returns PE k's wake generation.
func (b *Board) gen(k int) uint32 { return atomic.LoadUint32(b.m.u32(b.lay.per(k, pGen))) }

// block sleeps until woken, d passes or done closes; it reports a wake-up.
func (b *Board) block(p *Port, gen uint32, d time.Duration, done <-chan struct{}) bool {
	if b.shared != nil {
		w := b.m.u32(b.lay.per(p.pe, pGen))
		futexWait(w, gen, d)
		return atomic.LoadUint32(w) != gen
	}
	if p.timer == nil {
		p.timer = time.NewTimer(d)
	} else {
		p.timer.Reset(d)
	}
	defer p.timer.Stop()
	select {
	case <-p.wake:
		return true
	case <-done:
		return true
	case <-p.timer.C:
		return false
	}
}

// wakeChanged wakes the sleeping PEs for whom what s just committed
// differs from what they wait for.
func (b *Board) wakeChanged(s *sim) {
	if pause != nil {
		pause(-1, afterCommit)
	}
	m := atomic.LoadUint32(b.m.u32(hSleepers))
	if m == 0 {
		return
	}
	q := s.q()
	for ; m != 0; m &= m - 1 {
		k := bits.TrailingZeros32(m)
		rec := b.m.load(b.lay.per(k, pSleep))
		last, mask, rq := uint8(rec), uint8(rec>>8), uint8(rec>>16)
		if rq != q || (s.status[k]^last)&mask != 0 {
			b.wakePE(k)
		}
	}
}

// wakeAll wakes every sleeping PE (after an abort).
func (b *Board) wakeAll() {
	for m := atomic.LoadUint32(b.m.u32(hSleepers)); m != 0; m &= m - 1 {
		b.wakePE(bits.TrailingZeros32(m))
	}
}

// wakePE wakes PE k if it still sleeps; of several writers racing to wake
// it, one does.
func (b *Board) wakePE(k int) {
	bit := uint32(1) << k
	if atomic.AndUint32(b.m.u32(hSleepers), ^bit)&bit == 0 {
		return
	}
	if b.shared != nil {
		w := b.m.u32(b.lay.per(k, pGen))
		atomic.AddUint32(w, 1)
		futexWake(w)
		return
	}
	select {
	case b.ports[k].wake <- struct{}{}:
	default:
	}
}
