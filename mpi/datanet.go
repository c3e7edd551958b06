//go:build mpi

package mpi

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/ttlpapers/ttlpapers/am"
)

// The data network on MPI (docs/datanet.md): an am.Transport on a
// communicator of its own. A packet is one MPI_Isend of its used bytes,
// tag = its network, from a ring of send buffers whose requests are tested
// before reuse (a full ring is "inbox full": the endpoint polls and
// retries). Receives are preposted, recvDepth per network (as Luna's NXAM
// posts receives ahead, §4.1.3); MPI matches them in the order they were
// posted and never lets one sender's messages overtake each other, so
// taking them in posting order keeps each sender's order. A PE that leaves
// sends every other a departure carrying how many packets it took from
// each, so a sender learns both that it left and whether packets it sent
// were never handled. Every call is the PE's goroutine's, the one locked
// thread the binding uses.

const (
	tagLeave  = 2 // tags 0 and 1 are am.Left and am.Right
	recvDepth = 16
	sendDepth = 64
	pktHeader = 48 // src 4, handler 2, net 1, pad 1, len 2, pad 6, args 32
	pktMax    = pktHeader + am.MaxMedium
	causeMax  = 256
)

type dataNet struct {
	self, n int
	comm    Comm
	eng     *engine // answers the engine's pings while this PE waits here
	timeout time.Duration

	recv  [2][recvDepth]Request
	rbuf  [2][]byte // C: recvDepth packets per network
	rhead [2]int
	// done: the head receive of each network has completed (not yet
	// taken); fresh: that was tested by the other network's Recv, which
	// tests both heads in one call, so this one need not test again.
	done, fresh [2]bool

	send  [sendDepth]Request
	busy  [sendDepth]bool
	sbuf  []byte // C: sendDepth packets
	snext int

	leave []byte // C: a departure, out and in

	sent, took []uint64 // packets sent to and taken from each PE
	gone       []*am.GoneError
	left       bool
	wins       []Win // the regions of am.Direct, by number
	broken     error // an MPI error: the network cannot go on
}

func newDataNet(world Comm, eng *engine) (*dataNet, error) {
	comm, err := world.Dup()
	if err != nil {
		return nil, err
	}
	t := &dataNet{self: eng.self, n: eng.n, comm: comm, eng: eng, timeout: eng.timeout,
		sbuf: Alloc(sendDepth * pktMax), leave: Alloc(2 * (8*eng.n + 8 + causeMax)),
		sent: make([]uint64, eng.n), took: make([]uint64, eng.n), gone: make([]*am.GoneError, eng.n)}
	for net := range t.rbuf {
		t.rbuf[net] = Alloc(recvDepth * pktMax)
		for i := range recvDepth {
			if err := t.post(net, i); err != nil {
				return nil, err
			}
		}
	}
	return t, nil
}

func (t *dataNet) post(net, i int) (err error) {
	t.recv[net][i], err = t.comm.Irecv(unsafe.Pointer(&t.rbuf[net][i*pktMax]), pktMax, AnySource, net)
	return err
}

func (t *dataNet) Self() int { return t.self }
func (t *dataNet) PEs() int  { return t.n }

func (t *dataNet) Send(dst int, p *am.Packet) (bool, error) {
	if g := t.gone[dst]; g != nil {
		return false, g
	}
	if t.broken != nil {
		return false, t.broken
	}
	i := t.snext
	if t.busy[i] {
		done, _, err := t.send[i].Test(1)
		if err != nil {
			return false, t.fail(err)
		}
		if !done {
			t.departures() // a full ring may be a PE that left
			if g := t.gone[dst]; g != nil {
				return false, g
			}
			return false, nil
		}
		t.busy[i] = false
	}
	b := t.sbuf[i*pktMax : (i+1)*pktMax]
	binary.LittleEndian.PutUint32(b, uint32(t.self))
	binary.LittleEndian.PutUint16(b[4:], uint16(p.Handler))
	b[6] = byte(p.Net)
	binary.LittleEndian.PutUint16(b[8:], p.Len)
	for k, a := range p.Args {
		binary.LittleEndian.PutUint64(b[16+8*k:], a)
	}
	n := copy(b[pktHeader:], p.Data[:p.Len])
	r, err := t.comm.Isend(unsafe.Pointer(&b[0]), pktHeader+n, dst, int(p.Net))
	if err != nil {
		return false, t.fail(err)
	}
	t.send[i], t.busy[i] = r, true
	t.snext = (i + 1) % sendDepth
	t.sent[dst]++
	return true, nil
}

func (t *dataNet) Recv(net am.Net, p *am.Packet) bool {
	if t.broken != nil || t.left {
		return false
	}
	other := net ^ 1
	if !t.done[net] {
		if t.fresh[net] {
			t.fresh[net] = false
			return false
		}
		if err := Test2(&t.recv[net][t.rhead[net]], &t.done[net], &t.recv[other][t.rhead[other]], &t.done[other]); err != nil {
			t.fail(err)
			return false
		}
		t.fresh[other] = true
		if !t.done[net] {
			return false
		}
	}
	t.done[net], t.fresh[net] = false, false
	h := t.rhead[net]
	b := t.rbuf[net][h*pktMax : (h+1)*pktMax]
	p.Src = int32(binary.LittleEndian.Uint32(b))
	p.Handler = am.HandlerID(binary.LittleEndian.Uint16(b[4:]))
	p.Net = am.Net(b[6])
	p.Len = binary.LittleEndian.Uint16(b[8:])
	for k := range p.Args {
		p.Args[k] = binary.LittleEndian.Uint64(b[16+8*k:])
	}
	copy(p.Data[:p.Len], b[pktHeader:])
	t.took[p.Src]++
	if err := t.post(int(net), h); err != nil {
		t.fail(err)
	}
	t.rhead[net] = (h + 1) % recvDepth
	return true
}

// waitNap is how long Wait sleeps when nothing has arrived: MPI has no
// call that sleeps until a message comes, so a waiting PE looks again
// this often, and meanwhile answers the engine's pings.
const waitNap = 20 * time.Microsecond

func (t *dataNet) Wait(d time.Duration, done <-chan struct{}) {
	if t.broken != nil {
		return
	}
	if t.eng.answerPings() != nil || t.departures() {
		return
	}
	select {
	case <-done:
	case <-time.After(min(d, waitNap)):
	}
}

func (t *dataNet) Gone(k int) error {
	t.departures()
	if g := t.gone[k]; g != nil {
		return g
	}
	return t.broken
}

func (t *dataNet) fail(err error) error {
	if t.broken == nil {
		t.broken = fmt.Errorf("the data network failed: %w", err)
	}
	return t.broken
}

// departures takes the departures that have arrived, and reports whether
// there was one.
func (t *dataNet) departures() bool {
	got := false
	for t.broken == nil {
		ok, from, n, err := t.comm.Iprobe(AnySource, tagLeave)
		if err != nil {
			t.fail(err)
		}
		if !ok || err != nil {
			return got
		}
		in := t.leave[len(t.leave)/2:]
		if err := t.receive(in[:n], from, tagLeave); err != nil {
			t.fail(err)
			return got
		}
		took := binary.LittleEndian.Uint64(in[8*t.self:])
		failed := in[8*t.n] != 0
		g := &am.GoneError{PE: from}
		if failed {
			g.Cause = errors.New(string(in[8*t.n+8 : n]))
		}
		if lost := t.sent[from] - took; lost > 0 {
			msg := fmt.Sprintf("%d packet(s) this PE sent it arrived after it left, never handled", lost)
			if g.Cause != nil {
				msg = g.Cause.Error() + "; " + msg
			}
			g.Cause = errors.New(msg)
		}
		t.gone[from] = g
		got = true
	}
	return got
}

// receive receives the waiting message of n bytes from PE from into b.
func (t *dataNet) receive(b []byte, from, tag int) error {
	r, err := t.comm.Irecv(unsafe.Pointer(&b[0]), len(b), from, tag)
	if err != nil {
		return err
	}
	for { // it has arrived: the receive completes at once
		done, _, err := r.Test(spins)
		if err != nil || done {
			return err
		}
	}
}

// Leave drains, then tells every other PE that this one left — why, and
// how many packets it took from each — and withdraws its receives. Sends
// still in flight get the timeout to complete (they are small: MPI sends
// them eagerly, so they complete even to a stopped PE).
func (t *dataNet) Leave(cause error, drain func()) {
	if t.left {
		return
	}
	if drain != nil && t.broken == nil {
		drain()
	}
	t.left = true
	out := t.leave[:len(t.leave)/2]
	for k, c := range t.took {
		binary.LittleEndian.PutUint64(out[8*k:], c)
	}
	n := 8*t.n + 8
	out[8*t.n] = 0
	if cause != nil {
		out[8*t.n] = 1
		n += copy(out[n:], cause.Error())
	}
	var reqs []Request
	for k := range t.n {
		if k == t.self || t.gone[k] != nil || t.broken != nil {
			continue
		}
		r, err := t.comm.Isend(unsafe.Pointer(&out[0]), n, k, tagLeave)
		if err != nil {
			t.fail(err)
			break
		}
		reqs = append(reqs, r)
	}
	for i := range t.send {
		if t.busy[i] {
			reqs = append(reqs, t.send[i])
			t.busy[i] = false
		}
	}
	deadline := time.Now().Add(t.timeout)
	for _, r := range reqs {
		for {
			done, _, err := r.Test(spins)
			if err != nil || done {
				break
			}
			if time.Now().After(deadline) {
				r.Cancel()
				break
			}
		}
	}
	for net := range t.recv {
		for i := range t.recv[net] {
			if !t.done[net] || i != t.rhead[net] { // a completed one is no longer pending
				t.recv[net][i].Cancel()
			}
		}
	}
}

// The one-sided access of am.Direct: each region is a window of memory
// MPI allocated (MPI_Win_allocate, which on one machine is shared memory
// the others load and store), in a passive-target epoch from allocation
// to Free, so a get or put is MPI_Get or MPI_Put and a flush.

func (t *dataNet) Allocate(n int) ([]byte, int, error) {
	mem, w, err := t.comm.WinAllocate(n)
	if err != nil {
		return nil, 0, err
	}
	t.wins = append(t.wins, w)
	return mem, len(t.wins) - 1, nil
}

func (t *dataNet) Free(region int) error { return t.wins[region].Free() }

func (t *dataNet) Get(pe, region, off int, dst []byte) error {
	if g := t.gone[pe]; g != nil {
		return g
	}
	return t.wins[region].Get(dst, pe, off)
}

func (t *dataNet) Put(pe, region, off int, src []byte) error {
	if g := t.gone[pe]; g != nil {
		return g
	}
	return t.wins[region].Put(src, pe, off)
}
