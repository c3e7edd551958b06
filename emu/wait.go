package emu

import (
	"math/bits"
	"runtime"
	"sync/atomic"
	"time"
)

// Waiting. A port whose PE has a CPU of its own polls a little, since a
// partner on another CPU arrives within microseconds, then sleeps: in
// process after a few microseconds of polls (a goroutine's park and
// wake-up cost about one), between processes after spinFor (a futex costs
// the kernel more). After the first spinChecks polls each poll yields the
// CPU to other threads: on an idle machine the yield returns at once, and
// on a loaded one the partner's thread may be queued behind this one (a
// 2-process barrier that spun its 50 µs at load 7 took 57 µs; yielding,
// 2.7 µs). When PEs outnumber CPUs a polling or
// yielding waiter takes the CPU from the PE it waits for, so it sleeps at
// once: in-process in a plain channel receive, the Go runtime's own park
// and hand-off (what a sync.Cond barrier costs); between processes after a
// few yields, on a futex in the shared mapping. A writer whose commit
// changes what a sleeper waits for wakes it: the last PE to arrive at a
// barrier wakes the others. Writers load the sleepers word and nothing
// more when nobody sleeps. A writer stopped between its write and its
// wake-up call delays a sleeper by the sleep bound, no more: the sleeper
// then evaluates the board itself. In-process, one timer per board bounds
// every sleep (the tick): a sleeper arms it unless it is armed, instead of
// setting a timer of its own.
const (
	spinFor      = 50 * time.Microsecond // uncrowded, between processes: poll this long before sleeping
	spinChecks   = 256                   // polls before the first yield and the first clock read
	spinPolls    = 2048                  // uncrowded, in-process: poll this often before sleeping (256 parked too soon at 2 PEs)
	yieldsShared = 64                    // crowded, between processes: yield this often before sleeping
	maxBlock     = 2 * time.Millisecond  // the longest a sleeper sleeps between looks
	sleepRec     = uint64(1) << 63       // a sleep record is set
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
	// (the full look every few reads still comes). A locked board's status
	// is one load anyway.
	if !b.locked && w.mask&p.extBits == 0 && b.m.load(hDFF)&0xffff == p.dffW&0xffff && !p.fullLook() {
		return false
	}
	st := p.status()
	return (st^w.last)&w.mask != 0 || p.lastQ != w.q
}

// spin waits a little without sleeping. While every PE has a CPU it polls
// (see Waiting above). Crowded, between processes, it yields a few times
// (the PE waited for may be queued behind this one); crowded in-process it
// only looks once.
func (w *waiting) spin(timeout time.Duration) bool {
	b := w.p.b
	if b.crowded() {
		if b.shared != nil {
			for range yieldsShared {
				if schedYield(); w.changed() {
					return true
				}
			}
		}
		return w.changed()
	}
	// Past spinChecks polls each poll yields, and on a loaded machine one
	// yield can hand another process a whole time slice: the clock, read
	// after every yield, bounds the spin (counted yields alone once made a
	// 2-PE check-in at load 8 take 8 s instead of milliseconds).
	var start time.Time
	for i := 1; ; i++ {
		if w.changed() {
			return true
		}
		// In-process a park and wake-up cost about a microsecond: poll
		// only as long as a partner running on another CPU takes to arrive.
		if b.shared == nil && i >= spinPolls {
			return false
		}
		if i < spinChecks {
			continue
		}
		if start.IsZero() {
			start = time.Now()
		} else if time.Since(start) >= min(spinFor, timeout) {
			return false
		}
		schedYield() // the partner's thread may be queued behind ours
	}
}

// sleep registers the PE as sleeping and blocks for at most d; a writer
// whose commit changes what it waits for wakes it.
func (w *waiting) sleep(d time.Duration, done <-chan struct{}) bool {
	p, b := w.p, w.p.b
	if b.shared != nil {
		// Every input, before sleeping: a write whose writer was stopped
		// between its store and its commit is committed here. In-process
		// every writer goes on to commit, and wakes us.
		p.refresh()
	}
	k := p.pe
	b.m.store(b.lay.per(k, pSleep), sleepRec|sleepRecord(w.last, w.mask, w.q))
	select {
	case <-p.wake: // a wake-up meant for an earlier wait
	default:
	}
	if b.shared == nil {
		p.watch(done)
		select {
		case <-done: // closed before the watcher could see us sleep
			return true
		default:
		}
	}
	gen := b.gen(k)
	b.m.or(hSleepers, sleeperBits(k, w.mask&p.extBits != 0))
	// A commit between our look and our registration: the committer
	// stores the flip-flop word, then loads the sleepers; we stored our
	// bits, then load the word: one of us sees the other.
	if b.shared != nil {
		p.refresh()
	}
	if w.changed() {
		b.unregister(k)
		return true
	}
	switch b.block(p, gen, d, done) {
	case woken: // the writer cleared the bits
		return true
	case abandoned:
		b.unregister(k)
		return true
	}
	b.unregister(k)
	if b.shared != nil {
		p.checkPartner()
		p.refresh()
	}
	return w.changed()
}

// sleeperBits are PE k's bits in the sleepers word: sleeping, and waiting
// on status bits other PEs' lines drive (ext).
func sleeperBits(k int, ext bool) uint64 {
	if ext {
		return 1<<k | 1<<(32+k)
	}
	return 1 << k
}

func (b *Board) unregister(k int) { b.m.and(hSleepers, ^sleeperBits(k, true)) }

// sleeping is the mask of sleeping PEs.
func (b *Board) sleeping() uint32 { return uint32(b.m.load(hSleepers)) }

// crowded reports whether more PEs run than CPUs can: then a waiting PE
// should give its CPU to the PE it waits for at once.
func (b *Board) crowded() bool {
	if b.shared != nil {
		return int(b.m.load(hPEs)) > runtime.NumCPU()
	}
	return b.claimed.Load() > atomic.LoadInt32(&b.procs)
}

// gen returns PE k's wake generation.
func (b *Board) gen(k int) uint32 { return atomic.LoadUint32(b.m.u32(b.lay.per(k, pGen))) }

// How a block ended.
type blockEnd int

const (
	timedOut  blockEnd = iota
	woken              // by a writer
	abandoned          // done closed
)

// block sleeps until a writer wakes it, d passes, or done closes.
// In-process a sleep of maxBlock is bounded by the board's tick, and done
// is watched by a goroutine of the port's (watch), so that the sleep is a
// plain channel receive: the runtime's cheapest park.
func (b *Board) block(p *Port, gen uint32, d time.Duration, done <-chan struct{}) blockEnd {
	if b.shared != nil {
		w := b.m.u32(b.lay.per(p.pe, pGen))
		if futexWait(w, gen, d); atomic.LoadUint32(w) != gen {
			return woken
		}
		return timedOut
	}
	if d >= maxBlock {
		b.armTick()
		<-p.wake
	} else {
		if p.timer == nil {
			p.timer = time.NewTimer(d)
		} else {
			p.timer.Reset(d)
		}
		defer p.timer.Stop()
		select {
		case <-p.wake:
		case <-p.timer.C:
		}
	}
	// A writer clears the PE's sleeper bit before it wakes it; the tick
	// and the watcher leave it set.
	if b.sleeping()&(1<<p.pe) == 0 {
		return woken
	}
	select {
	case <-done:
		return abandoned
	default:
		return timedOut
	}
}

// watch makes sure that a goroutine wakes the port when done closes, for
// as long as the port is held: one per port and done channel, not one
// select per sleep.
func (p *Port) watch(done <-chan struct{}) {
	if done == nil || done == p.watched {
		return
	}
	p.unwatch()
	stop := make(chan struct{})
	p.watched, p.stopWatch = done, stop
	go func() {
		select {
		case <-done:
			select {
			case p.wake <- struct{}{}:
			default:
			}
		case <-stop:
		}
	}()
}

// unwatch ends the port's watcher, if it has one.
func (p *Port) unwatch() {
	if p.stopWatch != nil {
		close(p.stopWatch)
		p.watched, p.stopWatch = nil, nil
	}
}

// armTick makes sure the board's tick will wake every in-process sleeper
// within maxBlock.
func (b *Board) armTick() {
	if b.ticking.Load() || !b.ticking.CompareAndSwap(false, true) {
		return
	}
	b.tickOnce.Do(func() { b.tick = time.AfterFunc(maxBlock, b.onTick) })
	b.tick.Reset(maxBlock)
}

// onTick wakes every in-process sleeper, leaving each registered: a
// sleeper that finds its bit still set knows no writer woke it.
func (b *Board) onTick() {
	b.ticking.Store(false)
	for m := b.sleeping(); m != 0; m &= m - 1 {
		select {
		case b.ports[bits.TrailingZeros32(m)].wake <- struct{}{}:
		default:
		}
	}
}

// toWake returns the sleeping PEs for whom flip-flop word nw and the
// statuses committed with it, in place of word old, differ from what they
// wait for. A commit that leaves the flip-flops, faults and power-ups as
// they were (a PE that arrives at a barrier, not the last) changes only
// status bits that other PEs' lines drive: it looks at the PEs that wait
// on those alone.
func (b *Board) toWake(status []uint8, old, nw uint64) uint32 {
	if pause != nil {
		pause(-1, afterCommit)
	}
	m := b.m.load(hSleepers)
	if uint32(m) == 0 {
		return 0
	}
	if nw&0xffff == old&0xffff {
		m >>= 32
	}
	q := qBits(dffState(nw))
	var wake uint32
	for m := uint32(m); m != 0; m &= m - 1 {
		k := bits.TrailingZeros32(m)
		rec := b.m.load(b.lay.per(k, pSleep))
		last, mask, rq := uint8(rec), uint8(rec>>8), uint8(rec>>16)
		if rq != q || (status[k]^last)&mask != 0 {
			wake |= 1 << k
		}
	}
	return wake
}

// wakeAll wakes every sleeping PE (after an abort).
func (b *Board) wakeAll() { b.wake(^uint32(0)) }

// wake wakes the PEs in mask that still sleep; of several writers racing
// to wake one, one does. It clears their sleeper bits first, in one atomic
// operation, which tells each woken PE that a writer woke it.
func (b *Board) wake(mask uint32) {
	if mask == 0 {
		return
	}
	for m := uint32(b.m.and(hSleepers, ^(uint64(mask)|uint64(mask)<<32))) & mask; m != 0; m &= m - 1 {
		k := bits.TrailingZeros32(m)
		if b.shared != nil {
			w := b.m.u32(b.lay.per(k, pGen))
			atomic.AddUint32(w, 1)
			futexWake(w)
			continue
		}
		select {
		case b.ports[k].wake <- struct{}{}:
		default:
		}
	}
}
