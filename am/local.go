package am

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/ttlpapers/ttlpapers/am/internal/queue"
)

// Local is the data network of an in-process program (goroutine PEs, as
// package emulate runs them): each PE's inbox on each network is a bounded
// multi-producer, single-consumer queue (Vyukov's, a sequence number per
// slot), so a send is one compare-and-swap and a copy, a receive a load, a
// copy and a store, and neither allocates.
type Local struct {
	n      int
	boxes  []queue.Inbox // PE k's inbox for net is boxes[k*numNets+net]
	pes    []localPE
	stages []localStage // from src to dst on net: stages[(src*n+dst)*numNets+net]
	stage  int          // each ring's size (queue.StageSize)
	futex  bool         // sleepers sleep on their futex word, not in a channel receive
}

// localStage is a staging ring (queue.StageSend), made by its sender when it
// first stages a payload.
type localStage struct {
	queue.StageHead
	data atomic.Pointer[[]byte]
}

type localPE struct {
	queue.Peer                           // its state, as every transport keeps it
	gone       atomic.Pointer[GoneError] // set once, when the PE leaves
	wake       chan struct{}             // buffered 1: a sender's nudge to a sleeping receiver
	timer      *time.Timer
	tails      []uint64 // its position in each ring it stages into, by dst*numNets+net
	// its memory that the others reach one-sided (Direct), by region;
	// replaced, not changed, when it allocates or frees one
	regions atomic.Pointer[[][]byte]
}

// NewLocal makes the in-process data network of n PEs.
func NewLocal(n int) (*Local, error) {
	if n < 1 {
		return nil, fmt.Errorf("am: %d PEs: a data network needs at least 1", n)
	}
	l := &Local{n: n, boxes: make([]queue.Inbox, n*int(numNets)), pes: make([]localPE, n),
		stages: make([]localStage, n*n*int(numNets)), stage: queue.StageSize(n)}
	// A sleeper woken through a channel waits for the Go scheduler to run
	// it: on its waker's CPU once the waker parks, or on another after the
	// runtime has woken a thread for it and stolen it from the waker's run
	// queue. While every PE has a CPU a PE sleeps in the kernel instead, on
	// its futex word, and the kernel wakes its thread, which runs on at
	// once (a block transfer and its acknowledgment on a loaded machine:
	// 11 to 22 µs against 25 to 29). When PEs outnumber CPUs a sleeper must
	// give its CPU to another PE at once, which a goroutine blocked in the
	// kernel does not: then the channel.
	l.futex = queue.HaveFutex && n <= runtime.GOMAXPROCS(0)
	for i := range l.boxes {
		l.boxes[i].Init()
	}
	for k := range l.pes {
		l.pes[k].wake = make(chan struct{}, 1)
		l.pes[k].timer = time.NewTimer(time.Hour)
		l.pes[k].timer.Stop()
		l.pes[k].tails = make([]uint64, n*int(numNets))
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
	pe := &l.pes[dst]
	if g := pe.gone.Load(); g != nil {
		return false, g
	}
	s, pos, ok := l.boxes[dst*int(numNets)+int(p.Net)].Put(t.self, p)
	if !ok {
		return false, nil
	}
	if pe.Sleeping.Load() != 0 {
		l.wake(pe)
	}
	if pe.Lost(s, pos, nil) {
		return true, pe.gone.Load()
	}
	return true, nil
}

func (t *localT) MaxStaged() int { return queue.MaxStaged(t.l.stage) }

func (t *localT) SendStaged(dst int, p *Packet, payload []byte) (bool, error) {
	l := t.l
	if g := l.pes[dst].gone.Load(); g != nil {
		return false, g
	}
	st := &l.stages[(t.self*l.n+dst)*int(numNets)+int(p.Net)]
	data := st.data.Load()
	if data == nil { // the first payload from this PE to dst on p.Net
		b := make([]byte, l.stage)
		data = &b
		st.data.Store(data)
	}
	return queue.StageSend(t, dst, &st.StageHead, *data, &l.pes[t.self].tails[dst*int(numNets)+int(p.Net)], p, payload)
}

func (t *localT) Staged(p *Packet) []byte {
	st := &t.l.stages[(int(p.Src)*t.l.n+t.self)*int(numNets)+int(p.Net)]
	return queue.StageOut(&st.StageHead, *st.data.Load(), int(p.Staged))
}

func (t *localT) Unstage(p *Packet) {
	st := &t.l.stages[(int(p.Src)*t.l.n+t.self)*int(numNets)+int(p.Net)]
	queue.StageFree(&st.StageHead, t.l.stage, int(p.Staged))
}

func (t *localT) Recv(net Net, p *Packet) bool {
	return t.l.boxes[t.self*int(numNets)+int(net)].Take(p)
}

// pending reports whether either inbox of this PE holds a packet.
func (t *localT) pending() bool {
	b := t.l.boxes[t.self*int(numNets):]
	return b[Left].Ready() || b[Right].Ready()
}

// wake wakes PE pe, if it sleeps.
func (l *Local) wake(pe *localPE) {
	if l.futex {
		pe.Wakes.Add(1)
		queue.Futex(&pe.Wakes, queue.FutexWake, 1<<30, 0)
		return
	}
	select {
	case pe.wake <- struct{}{}:
	default:
	}
}

func (t *localT) Wait(d time.Duration, done <-chan struct{}) {
	pe := &t.l.pes[t.self]
	w := pe.Wakes.Load()
	pe.Sleeping.Store(1)
	defer pe.Sleeping.Store(0)
	if t.pending() {
		return
	}
	if t.l.futex { // done is looked at by the caller after d at most
		queue.Futex(&pe.Wakes, queue.FutexWait, w, d)
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

// Crowded: the PEs are goroutines, so they outnumber the CPUs when there
// are more of them than GOMAXPROCS.
func (t *localT) Crowded() bool { return t.l.n > runtime.GOMAXPROCS(0) }

func (t *localT) Beat() { b := &t.l.pes[t.self].Polls; b.Store(b.Load() + 1) }

func (t *localT) Beats(k int) uint32 {
	return queue.Beats(t.l.n, t.self, k, func(i int) *queue.Peer { return &t.l.pes[i].Peer })
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
	pe.Leave(drain)
	for k := range l.pes { // wake every waiter: one may be waiting on this PE
		if k != t.self {
			l.wake(&l.pes[k])
		}
	}
}

// One-sided access (Direct): the PEs share the address space, so a get or
// put is a copy, complete when it returns, as MPI's MPI_Get and MPI_Put
// with a flush are. Split-C's reads, writes, gets, puts and bulk forms of
// spread arrays then cost what a copy costs; the program's barriers order
// them with the owner's own accesses.

func (t *localT) Allocate(n int) ([]byte, int, error) {
	words := make([]uint64, (n+7)/8) // a Number in it is aligned
	mem := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), n)
	rs := t.setRegion(-1, mem)
	return mem, rs - 1, nil
}

func (t *localT) Free(region int) error {
	t.setRegion(region, nil)
	return nil
}

// setRegion sets this PE's region r to mem (a new one, if r is -1) and
// returns how many regions it has.
func (t *localT) setRegion(r int, mem []byte) int {
	pe := &t.l.pes[t.self]
	var rs [][]byte
	if old := pe.regions.Load(); old != nil {
		rs = append(rs, *old...)
	}
	if r < 0 {
		rs = append(rs, mem)
	} else if r < len(rs) {
		rs[r] = mem
	}
	pe.regions.Store(&rs)
	return len(rs)
}

// Region returns PE pe's memory in region r from off on, n bytes of it.
func (t *localT) Region(pe, r, off, n int) ([]byte, error) {
	p := &t.l.pes[pe]
	if g := p.gone.Load(); g != nil {
		return nil, g
	}
	var mem []byte
	if rs := p.regions.Load(); rs != nil && r >= 0 && r < len(*rs) {
		mem = (*rs)[r]
	}
	return queue.Within(mem, pe, r, off, n)
}

func (t *localT) Get(pe, region, off int, dst []byte) error {
	return queue.Get(t, pe, region, off, dst)
}
func (t *localT) Put(pe, region, off int, src []byte) error {
	return queue.Put(t, pe, region, off, src)
}
