package am

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
)

// inboxSlots is each inbox's capacity in packets (a power of two). A full
// inbox makes a sender poll and retry, as a full CM-5 network did; when PEs
// outnumber CPUs that costs a trip through the scheduler, so inboxes are
// deep: with 64 slots the radix sort's coalesce through global memory (4
// PEs all storing to all) took 13 times as long as with 1024.
const inboxSlots = 1024

// Local is the data network of an in-process program (goroutine PEs, as
// package emulate runs them): each PE's inbox on each network is a bounded
// multi-producer, single-consumer queue (Vyukov's, a sequence number per
// slot), so a send is one compare-and-swap and a copy, a receive a load, a
// copy and a store, and neither allocates.
type Local struct {
	n     int
	boxes []inbox // PE k's inbox for net is boxes[k*numNets+net]
	pes   []localPE
}

type localPE struct {
	state    atomic.Int32              // attached, leaving, drained
	gone     atomic.Pointer[GoneError] // set once, when the PE leaves
	sleeping atomic.Bool
	wake     chan struct{} // buffered 1: a sender's nudge to a sleeping receiver
	timer    *time.Timer
	_        [64]byte // keep PEs' flags off each other's cache lines
}

type inbox struct {
	_     [64]byte
	tail  atomic.Uint64 // next position producers claim
	_     [56]byte
	head  uint64 // next position the consumer reads (its own goroutine only)
	_     [56]byte
	slots [inboxSlots]slot
}

type slot struct {
	seq atomic.Uint64 // pos: free for position pos; pos+1: holds position pos
	p   Packet
}

// The states of a PE on the network.
const (
	attached = iota
	leaving  // it drains its inboxes: what is in them is handled
	drained  // it has gone: what arrives now is not
)

// NewLocal makes the in-process data network of n PEs.
func NewLocal(n int) (*Local, error) {
	if n < 1 {
		return nil, fmt.Errorf("am: %d PEs: a data network needs at least 1", n)
	}
	l := &Local{n: n, boxes: make([]inbox, n*int(numNets)), pes: make([]localPE, n)}
	for i := range l.boxes {
		for j := range l.boxes[i].slots {
			l.boxes[i].slots[j].seq.Store(uint64(j))
		}
	}
	for k := range l.pes {
		l.pes[k].wake = make(chan struct{}, 1)
		l.pes[k].timer = time.NewTimer(time.Hour)
		l.pes[k].timer.Stop()
	}
	return l, nil
}

// Transport returns PE k's side of the network.
func (l *Local) Transport(k int) Transport { return &localT{l: l, self: k} }

type localT struct {
	l    *Local
	self int
}

func (t *localT) Self() int { return t.self }
func (t *localT) PEs() int  { return t.l.n }

func (t *localT) Send(dst int, p *Packet) (bool, error) {
	l := t.l
	if g := l.pes[dst].gone.Load(); g != nil {
		return false, g
	}
	q := &l.boxes[dst*int(numNets)+int(p.Net)]
	pos := q.tail.Load()
	var s *slot
	for {
		s = &q.slots[pos&(inboxSlots-1)]
		switch seq := s.seq.Load(); {
		case seq == pos:
			if q.tail.CompareAndSwap(pos, pos+1) {
				goto claimed
			}
			pos = q.tail.Load()
		case seq < pos:
			return false, nil // full: the consumer has not freed this slot
		default:
			pos = q.tail.Load()
		}
	}
claimed:
	copyPacket(&s.p, p)
	s.p.Src = int32(t.self)
	s.seq.Store(pos + 1)
	pe := &l.pes[dst]
	if pe.sleeping.Load() {
		select {
		case pe.wake <- struct{}{}:
		default:
		}
	}
	// Checked after the packet is in. A PE that leaves marks itself
	// leaving, drains its inboxes, then marks itself drained: if dst was
	// not leaving here, its drain comes later and handles the packet; if
	// it was, wait for the drain and see whether the packet was taken.
	if pe.state.Load() == attached {
		return true, nil
	}
	for pe.state.Load() != drained {
		runtime.Gosched()
	}
	if s.seq.Load() == pos+1 {
		return true, pe.gone.Load()
	}
	return true, nil
}

// copyPacket copies the header and the payload, not the unused bytes.
func copyPacket(dst, src *Packet) {
	dst.Handler, dst.Net, dst.Len, dst.Args = src.Handler, src.Net, src.Len, src.Args
	copy(dst.Data[:src.Len], src.Data[:src.Len])
}

func (t *localT) Recv(net Net, p *Packet) bool {
	q := &t.l.boxes[t.self*int(numNets)+int(net)]
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

// pending reports whether either inbox of this PE holds a packet.
func (t *localT) pending() bool {
	for net := range numNets {
		q := &t.l.boxes[t.self*int(numNets)+int(net)]
		if q.slots[q.head&(inboxSlots-1)].seq.Load() == q.head+1 {
			return true
		}
	}
	return false
}

func (t *localT) Wait(d time.Duration, done <-chan struct{}) {
	pe := &t.l.pes[t.self]
	pe.sleeping.Store(true)
	defer pe.sleeping.Store(false)
	if t.pending() {
		return
	}
	pe.timer.Reset(d)
	select {
	case <-pe.wake:
	case <-pe.timer.C:
	case <-done:
	}
	pe.timer.Stop()
}

func (t *localT) Gone(k int) error {
	if g := t.l.pes[k].gone.Load(); g != nil {
		return g
	}
	return nil
}

func (t *localT) Leave(cause error, drain func()) {
	l := t.l
	pe := &l.pes[t.self]
	pe.gone.CompareAndSwap(nil, &GoneError{PE: t.self, Cause: cause})
	pe.state.Store(leaving)
	if drain != nil {
		drain()
	}
	pe.state.Store(drained)
	for k := range l.pes { // wake every waiter: one may be waiting on this PE
		if k != t.self {
			select {
			case l.pes[k].wake <- struct{}{}:
			default:
			}
		}
	}
}
