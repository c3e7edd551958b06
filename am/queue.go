package am

import (
	"runtime"
	"sync/atomic"
)

// The inbox every transport on shared memory uses — in-process (Local) or
// between processes (a file under /dev/shm) — and the states a PE passes
// through as it leaves. Both hold no Go pointers, so they may live in a
// mapping.

// inbox is a bounded multi-producer, single-consumer queue of packets
// (Vyukov's: a sequence number per slot).
type inbox struct {
	_     [64]byte
	tail  atomic.Uint64 // next position producers claim
	_     [56]byte
	head  uint64 // next position the consumer reads (its PE only)
	_     [56]byte
	slots [inboxSlots]slot
}

type slot struct {
	seq atomic.Uint64 // pos: free for position pos; pos+1: holds position pos
	p   Packet
	_   [8]byte // 320 bytes: each slot starts a cache line, so a short packet and its seq share one
}

func (q *inbox) init() {
	for j := range q.slots {
		q.slots[j].seq.Store(uint64(j))
	}
}

// put copies p, from PE src, into the next free slot: false when the inbox
// is full. It returns the slot and its position, for lost.
func (q *inbox) put(src int, p *Packet) (*slot, uint64, bool) {
	pos := q.tail.Load()
	for {
		s := &q.slots[pos&(inboxSlots-1)]
		switch seq := s.seq.Load(); {
		case seq == pos:
			if q.tail.CompareAndSwap(pos, pos+1) {
				copyPacket(&s.p, p)
				s.p.Src = int32(src)
				s.seq.Store(pos + 1)
				return s, pos, true
			}
			pos = q.tail.Load()
		case seq < pos:
			return nil, 0, false // full: the consumer has not freed this slot
		default:
			pos = q.tail.Load()
		}
	}
}

// take moves the oldest packet into p: false when the inbox is empty.
func (q *inbox) take(p *Packet) bool {
	s := &q.slots[q.head&(inboxSlots-1)]
	if s.seq.Load() != q.head+1 {
		return false
	}
	copyPacket(p, &s.p)
	p.Src = s.p.Src
	s.seq.Store(q.head + inboxSlots)
	q.head++
	return true
}

// ready reports whether a packet is waiting.
func (q *inbox) ready() bool { return q.slots[q.head&(inboxSlots-1)].seq.Load() == q.head+1 }

// copyPacket copies the header and the payload, not the unused bytes.
func copyPacket(dst, src *Packet) {
	dst.Handler, dst.Net, dst.Len, dst.Staged, dst.Args = src.Handler, src.Net, src.Len, src.Staged, src.Args
	copy(dst.Data[:src.Len], src.Data[:src.Len])
}

// The states of a PE on the network.
const (
	attached = iota
	leaving  // it drains its inboxes: what is in them is handled
	drained  // it has gone: what arrives now is not
)

// peer is a PE's state as the others see it.
type peer struct {
	state    atomic.Int32  // attached, leaving, drained
	sleeping atomic.Int32  // 1 while it waits in Wait
	wakes    atomic.Uint32 // the futex word it sleeps on (futex_linux.go), counting wake-ups
	beat     atomic.Uint32 // its polls, counted (Endpoint.wait: is the PE waited on running?)
	_        [48]byte      // keep PEs' words off each other's cache lines
}

// beats sums the polls counted in pes: PE k's, or, when k is -1, every
// PE's but self's.
func beats(n, self, k int, pe func(int) *peer) uint32 {
	if k >= 0 {
		return pe(k).beat.Load()
	}
	var sum uint32
	for i := range n {
		if i != self {
			sum += pe(i).beat.Load()
		}
	}
	return sum
}

// leave marks the PE leaving, runs drain, and marks it drained.
func (pe *peer) leave(drain func()) {
	pe.state.Store(leaving)
	if drain != nil {
		drain()
	}
	pe.state.Store(drained)
}

// lost reports, after a packet went into slot s at pos of this PE's inbox,
// whether it will never be handled. Checked after the packet is in: if the
// PE was not leaving, its final drain comes later and handles it; if it
// was, wait for the drain (or, dead says, for a PE that died without one)
// and see whether the packet was taken.
func (pe *peer) lost(s *slot, pos uint64, dead func() bool) bool {
	if pe.state.Load() == attached {
		return false
	}
	for pe.state.Load() != drained {
		if dead != nil && dead() {
			break
		}
		runtime.Gosched()
	}
	return s.seq.Load() == pos+1
}
