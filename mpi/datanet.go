//go:build mpi

package mpi

// The data network on MPI (docs/datanet.md): an am.Transport on a
// communicator of its own. Its hot path is C (below): one cgo call sends a
// packet, one takes a packet or says there is none, so the Go side pays
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
#cgo pkg-config: ompi-c
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

enum { DN_RECV = 16, DN_SEND = 64, DN_NONE = -1, DN_ERR = -2 };

typedef struct {
	MPI_Comm comm;
	int pkt;                      // bytes per buffer
	char *rbuf[2], *sbuf, *out;   // receive and send rings; out: the packet to send
	MPI_Request recv[2][DN_RECV]; // persistent, started in ring order from head
	int head[2];
	// done: the head receive has completed, not yet taken; taken: it was
	// handed to Go, restart it at the next call; fresh: the last call
	// (for the other network) tested it and found nothing.
	char done[2], taken[2], fresh[2];
	MPI_Request send[DN_SEND];
	int next;
	int err; // the MPI error of a call that returned DN_ERR
} ttl_dn;

static ttl_dn *ttl_dn_new(MPI_Comm c, int pkt) {
	ttl_dn *d = calloc(1, sizeof *d);
	d->comm = c;
	d->pkt = pkt;
	d->rbuf[0] = calloc(DN_RECV, pkt);
	d->rbuf[1] = calloc(DN_RECV, pkt);
	d->sbuf = calloc(DN_SEND, pkt);
	d->out = calloc(1, pkt);
	for (int i = 0; i < DN_SEND; i++) d->send[i] = MPI_REQUEST_NULL;
	for (int n = 0; n < 2; n++)
		for (int i = 0; i < DN_RECV; i++) {
			d->recv[n][i] = MPI_REQUEST_NULL;
			int err = MPI_Recv_init(d->rbuf[n] + i * pkt, pkt, MPI_BYTE, MPI_ANY_SOURCE, n, c, &d->recv[n][i]);
			if (err == MPI_SUCCESS) err = MPI_Start(&d->recv[n][i]);
			if (err != MPI_SUCCESS) { d->err = err; return d; }
		}
	return d;
}

// ttl_dn_send sends the n bytes at out to dst with tag, from the next
// buffer of the ring; DN_NONE when that buffer's last send has not
// completed yet.
static int ttl_dn_send(ttl_dn *d, int n, int dst, int tag) {
	int i = d->next, done = 1;
	if (d->send[i] != MPI_REQUEST_NULL && (d->err = MPI_Test(&d->send[i], &done, MPI_STATUS_IGNORE)) != MPI_SUCCESS) return DN_ERR;
	if (!done) return DN_NONE;
	char *b = d->sbuf + i * d->pkt;
	memcpy(b, d->out, n);
	if ((d->err = MPI_Isend(b, n, MPI_BYTE, dst, tag, d->comm, &d->send[i])) != MPI_SUCCESS) return DN_ERR;
	d->next = (i + 1) % DN_SEND;
	return 0;
}

// ttl_dn_recv returns the buffer of the oldest packet received on net,
// or DN_NONE. Both networks' next receives are tested in one MPI_Testany,
// which runs MPI's progress engine once.
static int ttl_dn_recv(ttl_dn *d, int net) {
	int o = net ^ 1;
	for (int k = 0; k < 2; k++) {
		if (!d->taken[k]) continue;
		int h = d->head[k];
		if ((d->err = MPI_Start(&d->recv[k][h])) != MPI_SUCCESS) return DN_ERR;
		d->taken[k] = 0;
		d->head[k] = (h + 1) % DN_RECV;
	}
	if (!d->done[net]) {
		if (d->fresh[net]) {
			d->fresh[net] = 0;
			return DN_NONE;
		}
		MPI_Request r[2] = {d->recv[net][d->head[net]], d->done[o] ? MPI_REQUEST_NULL : d->recv[o][d->head[o]]};
		int i, flag;
		if ((d->err = MPI_Testany(2, r, &i, &flag, MPI_STATUS_IGNORE)) != MPI_SUCCESS) return DN_ERR;
		if (i == 0) d->done[net] = 1;
		if (i == 1) d->done[o] = 1;
		d->fresh[o] = i == MPI_UNDEFINED;
		if (!d->done[net]) return DN_NONE;
	}
	d->done[net] = 0;
	d->fresh[net] = 0;
	d->taken[net] = 1;
	return d->head[net];
}

// ttl_dn_pending tests every send in flight and returns how many are.
static int ttl_dn_pending(ttl_dn *d) {
	int n = 0;
	for (int i = 0; i < DN_SEND; i++) {
		int done = 1;
		if (d->send[i] == MPI_REQUEST_NULL) continue;
		if ((d->err = MPI_Test(&d->send[i], &done, MPI_STATUS_IGNORE)) != MPI_SUCCESS) return DN_ERR;
		n += !done;
	}
	return n;
}

// ttl_dn_close cancels the sends still in flight and the receives still
// started, and frees them.
static void ttl_dn_close(ttl_dn *d) {
	for (int i = 0; i < DN_SEND; i++)
		if (d->send[i] != MPI_REQUEST_NULL) {
			MPI_Cancel(&d->send[i]);
			MPI_Request_free(&d->send[i]);
		}
	for (int n = 0; n < 2; n++)
		for (int i = 0; i < DN_RECV; i++) {
			if (d->recv[n][i] == MPI_REQUEST_NULL) continue;
			if (!(i == d->head[n] && (d->done[n] || d->taken[n]))) MPI_Cancel(&d->recv[n][i]);
			MPI_Request_free(&d->recv[n][i]);
		}
}
*/
import "C"

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/ttlpapers/ttlpapers/am"
)

const (
	tagLeave  = 2  // tags 0 and 1 are am.Left and am.Right
	pktHeader = 48 // src 4, handler 2, net 1, pad 1, len 2, pad 6, args 32
	pktMax    = pktHeader + am.MaxMedium
	causeMax  = 256
)

type dataNet struct {
	self, n int
	comm    Comm
	eng     *engine // answers the engine's pings while this PE waits here
	timeout time.Duration

	d    *C.ttl_dn
	rbuf [2][]byte // C: the receive rings
	out  []byte    // C: the packet to send

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
	d := C.ttl_dn_new(comm.c, pktMax)
	if err := check("MPI_Recv_init", d.err); err != nil {
		return nil, err
	}
	t := &dataNet{self: eng.self, n: eng.n, comm: comm, eng: eng, timeout: eng.timeout, d: d,
		out: unsafe.Slice((*byte)(unsafe.Pointer(d.out)), pktMax), leave: Alloc(2 * (8*eng.n + 8 + causeMax)),
		sent: make([]uint64, eng.n), took: make([]uint64, eng.n), gone: make([]*am.GoneError, eng.n)}
	for net := range t.rbuf {
		t.rbuf[net] = unsafe.Slice((*byte)(unsafe.Pointer(d.rbuf[net])), C.DN_RECV*pktMax)
	}
	return t, nil
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
	binary.LittleEndian.PutUint32(b, uint32(t.self))
	binary.LittleEndian.PutUint16(b[4:], uint16(p.Handler))
	b[6] = byte(p.Net)
	binary.LittleEndian.PutUint16(b[8:], p.Len)
	for k, a := range p.Args {
		binary.LittleEndian.PutUint64(b[16+8*k:], a)
	}
	n := copy(b[pktHeader:], p.Data[:p.Len])
	switch C.ttl_dn_send(t.d, C.int(pktHeader+n), C.int(dst), C.int(p.Net)) {
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
	h := int(C.ttl_dn_recv(t.d, C.int(net)))
	if h < 0 {
		if h == C.DN_ERR {
			t.fail(check("MPI_Testany", t.d.err))
		}
		return false
	}
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
	for t.broken == nil && C.ttl_dn_pending(t.d) > 0 && time.Now().Before(deadline) {
	}
	C.ttl_dn_close(t.d) // cancels what has not completed
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
