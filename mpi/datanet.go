//go:build mpi

package mpi

// The data network on MPI (docs/datanet.md): an am.Transport on a
// communicator of its own. When every rank is on one node, it is am's
// shared-memory network (shmnet.Net, as papersctl run's processes use) in
// memory MPI allocates for the node (nodeNet, below): a message is a store
// into the receiver's inbox, no MPI call and no cgo crossing. Across
// nodes it is MPI point-to-point (dataNet), whose hot path is C (below):
// one cgo call sends a packet, one takes a packet or says there is none,
// so the Go side pays
// one crossing per message, and MPI's progress engine runs once per poll
// of both networks.
//
// A packet is one MPI_Isend of its used bytes, tag = its network, from a
// ring of send buffers; a send is completed lazily, tested when its buffer
// comes round again (a full ring is "inbox full": the endpoint polls and
// retries). Receives are persistent (MPI_Recv_init), DN_RECV (16) per
// network, started in a ring (as Luna's NXAM posts receives ahead,
// §4.1.3); MPI matches started receives in the order they were started and
// never lets one sender's messages overtake each other, so taking them in
// that order keeps each sender's order. A taken buffer is restarted at the
// next call, once the Go side has copied the packet out. A PE that leaves
// sends every other a departure carrying how many packets it took from
// each, so a sender learns both that it left and whether packets it sent
// were never handled. Every call is the PE's goroutine's, the one locked
// thread the binding uses.

/*
#include "ttl.h"
*/
import "C"

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/ttlpapers/ttlpapers/am"
	"github.com/ttlpapers/ttlpapers/am/shmnet"
	"github.com/ttlpapers/ttlpapers/papers"
)

const (
	tagLeave = 2 // tags 0 and 1 are am.Left and am.Right
	// A packet: handler 2, payload length 2, argument words k 1, pad 3,
	// then the first k argument words (the rest are zero) and the payload.
	// The sender is MPI's; the network, the tag. Short is what matters: a
	// packet of 48 bytes took a quarter of a microsecond longer each way
	// than one of 8 (it spans a second cache line of MPI's shared-memory
	// mailbox).
	pktHeader = 8
	pktMax    = pktHeader + 8*len(am.Args{}) + am.MaxMedium
	causeMax  = 256
)

type dataNet struct {
	self, n int
	comm    comm
	eng     *engine // answers the engine's pings while this PE waits here
	timeout time.Duration

	h     C.uintptr_t // the C side
	d     *C.ttl_dn   // the same, for its fields
	rbuf  [2][]byte   // C: the receive rings
	out   []byte      // C: the packet to send
	small []byte      // C: the data of a small get or put

	leave []byte // C: a departure, out and in

	sent, took []uint64 // packets sent to and taken from each PE
	gone       []*am.GoneError
	left       bool
	wins       []win // the regions of am.Direct, by number
	broken     error // an MPI error: the network cannot go on
}

// newDataNet opens the data network over world (collective over world):
// am's shared-memory network when every rank is on this one's node (and
// PAPERS_MPI_NODE does not say otherwise), else MPI point-to-point.
func newDataNet(world comm, eng *engine) (am.Transport, error) {
	cm, err := world.dup()
	if err != nil {
		return nil, err
	}
	var all C.int
	if err := check("MPI_Comm_split_type", C.ttl_node_all(cm.c, &all)); err != nil {
		return nil, err
	}
	per, err := nodeRuns() // PAPERS_MPI_NODE=1 makes every PE a node: the point-to-point path on one machine
	if err != nil {
		return nil, err
	}
	if all != 0 && (per == 0 || per >= eng.n) {
		return newNodeNet(cm, eng)
	}
	var h C.uintptr_t
	if err := check("MPI_Recv_init", C.ttl_dn_new(cm.c, C.int(pktMax), &h)); err != nil {
		return nil, err
	}
	leave, err := alloc(2 * (8*eng.n + 8 + causeMax))
	if err != nil {
		return nil, err
	}
	d := C.ttl_dn_fields(h)
	t := &dataNet{self: eng.self, n: eng.n, comm: cm, eng: eng, timeout: eng.timeout, h: h, d: d,
		out: unsafe.Slice((*byte)(unsafe.Pointer(d.out)), pktMax), small: unsafe.Slice((*byte)(unsafe.Pointer(&d.small[0])), C.DN_SMALL),
		leave: leave,
		sent:  make([]uint64, eng.n), took: make([]uint64, eng.n), gone: make([]*am.GoneError, eng.n)}
	for net := range t.rbuf {
		t.rbuf[net] = unsafe.Slice((*byte)(unsafe.Pointer(d.rbuf[net])), C.DN_RECV*pktMax)
	}
	return t, nil
}

// nodeNet is the data network of a job on one node: shmnet.Net — its
// inboxes, staging rings, liveness (the ranks are processes of this
// machine: a dead one's pid is gone) and one-sided regions (memfds) — in
// rank 0's part of an MPI_Win_allocate_shared window, which MPI_Finalize
// frees. Only its waits are its own.
type nodeNet struct {
	*shmnet.Net
	eng *engine
}

func newNodeNet(cm comm, eng *engine) (*nodeNet, error) {
	size := shmnet.Size(eng.n)
	var base unsafe.Pointer
	var w win
	if err := check("MPI_Win_allocate_shared", C.ttl_dn_shared(C.MPI_Aint(size), cm.c, &base, &w.w)); err != nil {
		return nil, err
	}
	mem := unsafe.Slice((*byte)(base), size)
	if eng.self == 0 {
		if err := shmnet.Init(mem, eng.n); err != nil {
			return nil, err
		}
	}
	// Rank 0 has made it, or will soon: it stores the network's magic
	// last, and a rank attaches once it sees that (no barrier: a wait
	// with a deadline).
	deadline := time.Now().Add(eng.timeout)
	for {
		s, err := shmnet.Attach(mem, eng.self)
		if err == nil {
			return &nodeNet{Net: s, eng: eng}, nil
		}
		if time.Now().After(deadline) {
			return nil, papers.Errorf("mpi", eng.self, "rank 0 did not make the data network within %v (%v): is it running?", eng.timeout, err)
		}
		time.Sleep(10 * time.Microsecond)
	}
}

// pingNap is the longest a nodeNet wait sleeps on its futex before it
// answers the engine's pings (timedOut asks for an answer within 10 ms).
const pingNap = time.Millisecond

// Crowded: the ranks outnumber the machine's CPUs. Not shmnet.Net's
// answer, the CPUs this process may run on: mpirun binds each rank to a
// core of its own (2 ranks: one CPU each), which is not crowded, and a
// waiter that slept after a few polls made a round trip 7 µs, not 1.
func (t *nodeNet) Crowded() bool { return t.PEs() > int(C.ttl_cpus()) }

func (t *nodeNet) Wait(d time.Duration, done <-chan struct{}) {
	if t.eng.answerPings() != nil {
		return
	}
	t.Net.Wait(min(d, pingNap), done)
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
	b := t.out
	k := len(p.Args)
	for k > 0 && p.Args[k-1] == 0 {
		k--
	}
	binary.LittleEndian.PutUint16(b, uint16(p.Handler))
	binary.LittleEndian.PutUint16(b[2:], p.Len)
	b[4] = byte(k)
	for i, a := range p.Args[:k] {
		binary.LittleEndian.PutUint64(b[pktHeader+8*i:], a)
	}
	n := pktHeader + 8*k
	n += copy(b[n:], p.Data[:p.Len])
	switch C.ttl_dn_send(t.h, C.int(n), C.int(dst), C.int(p.Net)) {
	case C.DN_ERR:
		return false, t.fail(check("MPI_Isend", t.d.err))
	case C.DN_NONE:
		t.departures() // a full ring may be a PE that left
		if g := t.gone[dst]; g != nil {
			return false, g
		}
		return false, nil
	}
	t.sent[dst]++
	return true, nil
}

func (t *dataNet) Recv(net am.Net, p *am.Packet) bool {
	if t.broken != nil || t.left {
		return false
	}
	d := t.d
	if d.done[net] == 0 {
		if d.fresh[net] != 0 { // tested just now: no call
			d.fresh[net] = 0
			return false
		}
		if r := C.ttl_dn_test(t.h, C.int(net)); r < 0 {
			if r == C.DN_ERR {
				t.fail(check("MPI_Testsome", d.err))
			}
			return false
		}
	}
	h := int(d.head[net])
	d.done[net], d.fresh[net], d.taken[net] = 0, 0, 1 // restarted at the next call
	b := t.rbuf[net][h*pktMax : (h+1)*pktMax]
	p.Src = int32(d.src[net])
	p.Handler = am.HandlerID(binary.LittleEndian.Uint16(b))
	p.Net, p.Staged = net, 0 // no staging here: a payload is at most MaxMedium
	p.Len = binary.LittleEndian.Uint16(b[2:])
	k := int(b[4])
	for i := range p.Args {
		p.Args[i] = 0
		if i < k {
			p.Args[i] = binary.LittleEndian.Uint64(b[pktHeader+8*i:])
		}
	}
	copy(p.Data[:p.Len], b[pktHeader+8*k:])
	t.took[p.Src]++
	return true
}

// spinTests is how many times Spin tests: a microsecond or so (16 made
// round trips slower: the reply came more often while the wait was in Go).
const spinTests = 32

// Spin implements am.Spinner: the spin of a wait, in C.
func (t *dataNet) Spin() bool {
	if t.broken != nil || t.left {
		return false
	}
	switch C.ttl_dn_spin(t.h, spinTests) {
	case C.DN_ERR:
		t.fail(check("MPI_Testsome", t.d.err))
		return false
	case 0:
		return false
	}
	return true
}

// waitNap is how long Wait waits, testing and yielding the CPU, when
// nothing has arrived: MPI has no call that sleeps until a message comes,
// so a waiting PE answers the engine's pings and looks for departures
// this often.
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
		return
	default:
	}
	if C.ttl_dn_nap(t.h, C.int(min(d, waitNap)/time.Microsecond)) == C.DN_ERR {
		t.fail(check("MPI_Testsome", t.d.err))
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
		ok, from, n, err := t.comm.iprobe(anySource, tagLeave)
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
	r, err := t.comm.irecv(unsafe.Pointer(&b[0]), len(b), from, tag)
	if err != nil {
		return err
	}
	for { // it has arrived: the receive completes at once
		done, _, err := r.test(spins)
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
	var reqs []request
	for k := range t.n {
		if k == t.self || t.gone[k] != nil || t.broken != nil {
			continue
		}
		r, err := t.comm.isend(unsafe.Pointer(&out[0]), n, k, tagLeave)
		if err != nil {
			t.fail(err)
			break
		}
		reqs = append(reqs, r)
	}
	deadline := time.Now().Add(t.timeout)
	for _, r := range reqs {
		for {
			done, _, err := r.test(spins)
			if err != nil || done {
				break
			}
			if time.Now().After(deadline) {
				r.cancel()
				break
			}
		}
	}
	for t.broken == nil && C.ttl_dn_pending(t.h) > 0 && time.Now().Before(deadline) {
	}
	C.ttl_dn_close(t.h) // cancels what has not completed
}

// The one-sided access of am.Direct across nodes (on one node it is
// shmnet.Net's): a region is a window of MPI_Win_allocate, in a
// passive-target epoch from allocation to Free, and a get or put is
// MPI_Get or MPI_Put and a flush, in one cgo call: complete when it
// returns.

func (t *dataNet) Allocate(n int) ([]byte, int, error) {
	mem, w, err := t.comm.winAllocate(n)
	if err != nil {
		return nil, 0, err
	}
	t.wins = append(t.wins, w)
	return mem, len(t.wins) - 1, nil
}

func (t *dataNet) Free(region int) error { return t.wins[region].free() }

func (t *dataNet) Get(pe, region, off int, dst []byte) error {
	if g := t.gone[pe]; g != nil {
		return g
	}
	w := t.wins[region]
	if len(dst) > len(t.small) {
		return w.get(dst, pe, off)
	}
	err := check("MPI_Get", C.ttl_dn_get(t.h, C.int(len(dst)), C.int(pe), C.MPI_Aint(off), w.w))
	copy(dst, t.small)
	return err
}

func (t *dataNet) Put(pe, region, off int, src []byte) error {
	if g := t.gone[pe]; g != nil {
		return g
	}
	w := t.wins[region]
	if len(src) > len(t.small) {
		return w.put(src, pe, off)
	}
	copy(t.small, src)
	return check("MPI_Put", C.ttl_dn_put(t.h, C.int(len(src)), C.int(pe), C.MPI_Aint(off), w.w))
}
