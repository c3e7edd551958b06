package queue

import (
	"runtime"
	"sync/atomic"
)

// The inbox every transport on shared memory uses — in-process (am.Local)
// or between processes (am/shmnet) — and the states a PE passes through as
// it leaves.

// InboxSlots is each inbox's capacity in packets (a power of two). A full
// inbox makes a sender poll and retry, as a full CM-5 network did; when PEs
// outnumber CPUs that costs a trip through the scheduler, so inboxes are
// deep: with 64 slots the radix sort's coalesce through global memory (4
// PEs all storing to all) took 13 times as long as with 1024.
const InboxSlots = 1024

// Inbox is a bounded multi-producer, single-consumer queue of packets
// (Vyukov's: a sequence number per slot).
type Inbox struct {
	_     [64]byte
	tail  atomic.Uint64 // next position producers claim
	_     [56]byte
	head  uint64 // next position the consumer reads (its PE only)
	_     [56]byte
	slots [InboxSlots]Slot
}

// Slot is one of an inbox's places for a packet.
type Slot struct {
	seq atomic.Uint64 // pos: free for position pos; pos+1: holds position pos
	p   Packet
	_   [8]byte // 320 bytes: each slot starts a cache line, so a short packet and its seq share one
}

// Init makes the inbox empty; a new one is not until then.
func (q *Inbox) Init() {
	for j := range q.slots {
		q.slots[j].seq.Store(uint64(j))
	}
}

// Put copies p, from PE src, into the next free slot: false when the inbox
// is full. It returns the slot and its position, for Lost.
func (q *Inbox) Put(src int, p *Packet) (*Slot, uint64, bool) {
	pos := q.tail.Load()
	for {
		s := &q.slots[pos&(InboxSlots-1)]
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

// Take moves the oldest packet into p: false when the inbox is empty.
func (q *Inbox) Take(p *Packet) bool {
	s := &q.slots[q.head&(InboxSlots-1)]
	if s.seq.Load() != q.head+1 {
		return false
	}
	copyPacket(p, &s.p)
	p.Src = s.p.Src
	s.seq.Store(q.head + InboxSlots)
	q.head++
	return true
}

// Ready reports whether a packet is waiting.
func (q *Inbox) Ready() bool { return q.slots[q.head&(InboxSlots-1)].seq.Load() == q.head+1 }

// copyPacket copies the header and the payload, not the unused bytes.
func copyPacket(dst, src *Packet) {
	dst.Handler, dst.Net, dst.Len, dst.Staged, dst.Args = src.Handler, src.Net, src.Len, src.Staged, src.Args
	copy(dst.Data[:src.Len], src.Data[:src.Len])
}

// The states of a PE on the network.
const (
	Attached = iota
	Leaving  // it drains its inboxes: what is in them is handled
	Drained  // it has gone: what arrives now is not
)

// Peer is a PE's state as the others see it.
type Peer struct {
	State    atomic.Int32  // Attached, Leaving, Drained
	Sleeping atomic.Int32  // 1 while it waits in Wait
	Wakes    atomic.Uint32 // the futex word it sleeps on (Futex), counting wake-ups
	Polls    atomic.Uint32 // its polls, counted (Endpoint.wait: is the PE waited on running?)
	_        [48]byte      // keep PEs' words off each other's cache lines
}

// Beats sums the polls counted in pes: PE k's, or, when k is -1, every
// PE's but self's.
func Beats(n, self, k int, pe func(int) *Peer) uint32 {
	if k >= 0 {
		return pe(k).Polls.Load()
	}
	var sum uint32
	for i := range n {
		if i != self {
			sum += pe(i).Polls.Load()
		}
	}
	return sum
}

// Leave marks the PE leaving, runs drain, and marks it drained.
func (pe *Peer) Leave(drain func()) {
	pe.State.Store(Leaving)
	if drain != nil {
		drain()
	}
	pe.State.Store(Drained)
}

// Lost reports, after a packet went into slot s at pos of this PE's inbox,
// whether it will never be handled. Checked after the packet is in: if the
// PE was not leaving, its final drain comes later and handles it; if it
// was, wait for the drain (or, dead says, for a PE that died without one)
// and see whether the packet was taken.
func (pe *Peer) Lost(s *Slot, pos uint64, dead func() bool) bool {
	if pe.State.Load() == Attached {
		return false
	}
	for pe.State.Load() != Drained {
		if dead != nil && dead() {
			break
		}
		runtime.Gosched()
	}
	return s.seq.Load() == pos+1
}

// Beater is implemented by the transports whose PEs see each other's
// polls: the in-process and shared-memory ones.
type Beater interface {
	// Beat counts a poll of this PE's.
	Beat()
	// Beats sums the polls counted by PE k, or by every other PE when k
	// is -1.
	Beats(k int) uint32
}
