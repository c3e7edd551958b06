//go:build mpi

package mpi

// #include "ttl.h"
import "C"

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"time"
	"unsafe"

	"github.com/ttlpapers/ttlpapers/am"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/peset"
)

// Control messages travel on a duplicate of MPI_COMM_WORLD, apart from the
// collectives: the parallel interrupt (tagInt), its acknowledge (tagAck)
// and the diagnosis of a wait that timed out (tagPing, tagPong).
const (
	tagInt = 1 + iota
	tagAck
	tagPing
	tagPong
)

// ctlSize is the size of every control message: epoch (4 bytes, -1 from a
// PE rejoining), code, stay, the raisers it knows (8), the members it
// knows (8), the data operations it has completed (8), the last ticket of
// a hot collective it joined (8).
const ctlSize = 40

type ctl struct {
	epoch   int32
	code    uint8
	stay    bool
	pending bool
	raisers peset.Set
	members peset.Set
	done    uint64
	ticket  uint64
}

func (c ctl) put(b []byte) {
	binary.LittleEndian.PutUint32(b, uint32(c.epoch))
	b[4] = c.code
	b[5], b[6] = 0, 0
	if c.stay {
		b[5] = 1
	}
	if c.pending {
		b[6] = 1
	}
	binary.LittleEndian.PutUint64(b[8:], uint64(c.raisers))
	binary.LittleEndian.PutUint64(b[16:], uint64(c.members))
	binary.LittleEndian.PutUint64(b[24:], c.done)
	binary.LittleEndian.PutUint64(b[32:], c.ticket)
}

func getCtl(b []byte) ctl {
	return ctl{epoch: int32(binary.LittleEndian.Uint32(b)), code: b[4], stay: b[5] != 0, pending: b[6] != 0,
		raisers: peset.Set(binary.LittleEndian.Uint64(b[8:])), members: peset.Set(binary.LittleEndian.Uint64(b[16:])), done: binary.LittleEndian.Uint64(b[24:]),
		ticket: binary.LittleEndian.Uint64(b[32:])}
}

// engine is papers.Engine on MPI. Collectives run on data, a communicator
// of the participants; an interrupt's acknowledge abandons any collective
// cut short (MPI cannot cancel one) with its communicator and creates the
// next one for the participants it agreed on.
type engine struct {
	self, n int
	timeout time.Duration
	ctx     context.Context
	world   comm // control messages
	data    comm // the participants' collectives
	// groups is the parent of every epoch's data communicator: kept apart
	// from world, since MPI_Comm_create_group talks on its parent with the
	// tag it is given, which must not meet the control messages.
	groups  comm
	ranks   []int
	members peset.Set
	epoch   int32
	left    bool
	done    uint64 // collectives completed in this epoch
	// The ticket of a hot collective (coll.go) is base plus its number in
	// the epoch: base is the highest ticket any participant joined before
	// the epoch, so that no arrival left by an abandoned one can pass for
	// one of this epoch. ticket is the last this PE joined.
	base, ticket uint64

	coll    *coll   // the hot collectives (coll.go)
	pending request // the collective in flight, if pendOp != "" and not inColl
	inColl  bool    // the collective in flight is coll's
	pendOp  string
	// abandoned: the last acknowledge abandoned the collective in flight
	abandoned bool
	deferred  error // an interrupt acknowledged while a collective that completed was in flight

	gsend  []byte // C: GatherBuffer
	grecv  []byte // C: the participants' parts
	gout   []byte // every PE's part, by PE
	ctlBuf []byte // C: control messages out and in
	broken error  // set when the collectives can no longer be kept in step

	lastLeft, lastJoined peset.Set // what the last acknowledge changed
	// failed are the PEs that left with substrate.AbortCode: their
	// processes exit without MPI_Finalize (session.Fail).
	failed peset.Set

	ep *am.Endpoint // the PE's data network (datanet.go)
}

// open is Open (doc.go). Every wait of it is bounded. MPI_Init waits for
// every rank to start it and cannot be abandoned: a watchdog ends the
// process after cfg.CheckInTimeout. Then a check-in of point-to-point
// messages only (checkIn) names the ranks that have not reached Open
// within cfg.CheckInTimeout, before any collective; the blocking
// collectives that create the communicators follow, bounded by a watchdog
// of cfg.Timeout.
func open(cfg papers.Config) (*papers.PE, error) {
	per, err := nodeRuns()
	if err != nil {
		return nil, err
	}
	timeout, checkInTimeout, err := cfg.Timeouts()
	if err != nil {
		return nil, err
	}
	self, _, _ := Launched()
	stop := watchdog(checkInTimeout, func() string {
		return fmt.Sprintf("papers: PE %d: MPI_Init did not return within %v: it waits for every rank of the job to start it, and one has not (stopped, slow to start, or dead; MPI cannot say which). Start every rank within it, or raise it (PAPERS_CHECKIN, -papers.checkin); ending this process", self, checkInTimeout)
	})
	err = initMPI()
	stop()
	if err != nil {
		return nil, fmt.Errorf("%w (is this process started by %s, and is the MPI runtime installed? apt-get install %s)", err, launcher, runtimePackage)
	}
	w := world()
	rank, size := w.rank(), w.size()
	if cfg.PEs != 0 && cfg.PEs != size || cfg.PEs != 0 && cfg.PE != rank {
		return nil, fmt.Errorf("mpi: PE %d of %d asked for, but MPI started this process as rank %d of %d: this program is built for %s; was it started by another MPI's launcher? (%s)", cfg.PE, cfg.PEs, rank, size, library, buildHint)
	}
	cfg.PE, cfg.PEs = rank, size
	if size > lpt.MaxPEs {
		return nil, fmt.Errorf("mpi: %d ranks: a PAPERS program has 1 to %d PEs, as the largest board: start at most %d (mpirun -np)", size, lpt.MaxPEs, lpt.MaxPEs)
	}
	if err := checkIn(w, checkInTimeout); err != nil {
		return nil, err
	}
	ctlBuf, err := alloc(2 * ctlSize)
	if err != nil {
		return nil, err
	}
	e := &engine{self: rank, n: size, timeout: timeout, ctx: cfg.Context, members: 1<<size - 1, ctlBuf: ctlBuf}
	stop = watchdog(timeout, func() string {
		return fmt.Sprintf("papers: PE %d: check-in: the communicators were not created within %v after every rank checked in (MPI_Comm_dup, MPI_Comm_split_type, MPI_Win_allocate_shared, MPI_Allgather: collectives MPI cannot abandon): a rank stopped or died in between; ending this process", rank, timeout)
	})
	dn, err := e.setup(per)
	stop()
	if err != nil {
		return nil, err
	}
	e.timeout = checkInTimeout // the check-in barrier has a bound of its own
	p, err := papers.OpenEngine(e, cfg)
	e.timeout = timeout
	if err != nil {
		return nil, err
	}
	e.ep = am.NewEndpoint(dn, am.Options{Timeout: timeout, Context: cfg.Context})
	p.AttachDataNet(e.ep)
	return p, nil
}

// setup creates the engine's communicators, its hot collectives (per:
// nodeRuns) and its data network: blocking collective calls over every rank.
func (e *engine) setup(per int) (am.Transport, error) {
	var err error
	if e.world, err = world().dup(); err != nil {
		return nil, err
	}
	if e.data, err = e.world.dup(); err != nil {
		return nil, err
	}
	if e.groups, err = e.world.dup(); err != nil {
		return nil, err
	}
	if e.coll, err = newColl(e.world, per); err != nil {
		return nil, err
	}
	for k := range e.n {
		e.ranks = append(e.ranks, k)
	}
	e.coll.configure(e.data, e.ranks, e.self)
	return newDataNet(e.world, e)
}

// tagHello is checkIn's, on MPI_COMM_WORLD, which nothing else uses.
const tagHello = 1

// checkIn returns once every rank of w has reached it, or an error naming
// those that did not within timeout: every rank sends every other a hello
// and waits for theirs. It is made of point-to-point messages only, polled
// with the deadline, so that a rank that has not started, stopped or died
// is named before the collectives that could not be abandoned.
func checkIn(w comm, timeout time.Duration) error {
	self, n := w.rank(), w.size()
	in, err := alloc(n + 1) // the last byte is the hello sent
	if err != nil {
		return err
	}
	out := in[n:]
	var reqs []request // a receive and a send for each other rank
	var peer []int
	for k := range n {
		if k == self {
			continue
		}
		r, err := w.irecv(unsafe.Pointer(&in[k]), 1, k, tagHello)
		if err != nil {
			return papers.Errorf("papers", self, "check-in: %w", err)
		}
		s, err := w.isend(unsafe.Pointer(&out[0]), 1, k, tagHello)
		if err != nil {
			return papers.Errorf("papers", self, "check-in: %w", err)
		}
		reqs, peer = append(reqs, r, s), append(peer, k, k)
	}
	done := make([]bool, len(reqs))
	deadline := time.Now().Add(timeout)
	for {
		var missing peset.Set
		for i := range reqs {
			if done[i] {
				continue
			}
			ok, _, err := reqs[i].test(spins)
			if err != nil {
				return papers.Errorf("papers", self, "check-in: %w", err)
			}
			done[i] = ok
			if !ok {
				missing |= 1 << peer[i]
			}
		}
		if missing == 0 {
			free(in)
			return nil
		}
		if time.Now().After(deadline) {
			for i := range reqs {
				if !done[i] {
					reqs[i].cancel() // its buffer stays: MPI may still hold it
				}
			}
			return &papers.TimeoutError{PE: self, Op: "check-in", Waited: timeout,
				Stall: missing.String() + " did not reach mpi.Open: not started, stopped or dead (ranks started by hand need a longer PAPERS_CHECKIN or -papers.checkin)"}
		}
	}
}

// watchdog bounds a blocking MPI call, which cannot be abandoned: unless
// the stop it returns is called within d, it prints msg() and ends the
// process with status 1, and mpirun ends the job. (It exits rather than
// calling MPI_Abort: under MPI_THREAD_SINGLE no other thread may call MPI
// while the PE's is inside it.)
func watchdog(d time.Duration, msg func() string) (stop func()) {
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
		case <-time.After(d):
			fmt.Fprintln(os.Stderr, msg())
			os.Exit(1)
		}
	}()
	return func() { close(done) }
}

func (e *engine) errorf(format string, a ...any) error {
	return papers.Errorf("papers", e.self, format, a...)
}

// start checks that a collective may begin, and returns a deferred
// interrupt as this operation's.
func (e *engine) start(op string) error {
	if e.broken != nil {
		return e.broken
	}
	if err := e.deferred; err != nil {
		e.deferred = nil
		return err
	}
	return nil
}

// opBarrier is the hot collective of a barrier, which carries nothing.
const opBarrier = C.TTL_BARRIER

// join joins the hot collective o (opBarrier or an entry of ops) of w
// bits with x: it is in flight afterwards.
func (e *engine) join(op string, o C.int, w int, x uint64) {
	e.ticket = e.base + e.done + 1
	e.coll.start(e.ticket, int(e.epoch&1), o, w, x)
	e.inColl, e.pendOp = true, op
}

func (e *engine) Barrier(op string) error {
	if err := e.start(op); err != nil {
		return err
	}
	e.join(op, opBarrier, 0, 0)
	return e.wait(op)
}

func (e *engine) StartBarrier(op string, data uint8) error {
	if err := e.start(op); err != nil {
		return err
	}
	e.join(op, ops[papers.BitAnd], 8, uint64(data))
	return nil
}

func (e *engine) PollBarrier(op string, block bool) (bool, uint8, error) {
	if !block {
		done, err := e.test(1)
		if err != nil {
			return false, 0, e.fail(op, err)
		}
		if done {
			if err := e.completed(op); err != nil {
				return false, 0, err
			}
		} else if err := e.noticeInterrupt(op); err != nil || e.pendOp != "" {
			return false, 0, err
		}
	} else if err := e.wait(op); err != nil {
		return false, 0, err
	}
	return true, ^uint8(e.coll.result()) & 0xf, nil
}

func (e *engine) Allreduce(op string, o papers.Op, w int, x uint64) (uint64, error) {
	if err := e.start(op); err != nil {
		return 0, err
	}
	e.join(op, ops[o], w, x)
	if err := e.wait(op); err != nil {
		return 0, err
	}
	return e.coll.result(), nil
}

func (e *engine) GatherBuffer(n int) []byte {
	if cap(e.gsend) < n {
		if e.gsend != nil {
			free(e.gsend[:cap(e.gsend)])
			e.gsend = nil
		}
		// One allocation: this PE's part, then every participant's.
		b, err := alloc(n * (1 + e.n))
		if err != nil {
			// The gather cannot start here: Allgather reports it.
			e.fail("gather", err)
			return make([]byte, n)
		}
		e.gsend, e.grecv = b[:n:n], b[n:]
		e.gout = make([]byte, n*e.n)
	}
	return e.gsend[:n]
}

func (e *engine) Allgather(op string, n int) ([]byte, error) {
	if err := e.start(op); err != nil {
		return nil, err
	}
	r, err := e.data.iallgather(unsafe.Pointer(unsafe.SliceData(e.gsend)), n, unsafe.Pointer(unsafe.SliceData(e.grecv)))
	if err != nil {
		return nil, e.fail(op, err)
	}
	e.pending, e.inColl, e.pendOp = r, false, op
	if err := e.wait(op); err != nil {
		return nil, err
	}
	if len(e.ranks) == e.n {
		return e.grecv[:n*e.n], nil
	}
	out := e.gout[:n*e.n]
	clear(out)
	for i, k := range e.ranks {
		copy(out[k*n:(k+1)*n], e.grecv[i*n:(i+1)*n])
	}
	return out, nil
}

// fail records an MPI error: the collectives are out of step for good.
func (e *engine) fail(op string, err error) error {
	e.broken = e.errorf("%s: %w; the PEs' collectives are out of step: end the program", op, err)
	return e.broken
}

// spins is how many times a wait polls its request in C between its
// checks of the interrupt, the context and the deadline.
const spins = 256

// test polls the collective in flight up to spins times.
func (e *engine) test(spins int) (bool, error) {
	if e.inColl {
		return e.coll.poll(spins)
	}
	done, _, err := e.pending.test(spins)
	return done, err
}

// wait polls the collective in flight until it completes, answering pings,
// checking for a parallel interrupt (the board's CHECKINT) and bounding the
// wait by the timeout and the context. A wait that times out names the PEs
// that did not answer a ping.
func (e *engine) wait(op string) error {
	var start time.Time
	for {
		done, err := e.test(spins)
		if err != nil {
			e.pendOp = ""
			return e.fail(op, err)
		}
		if done {
			return e.completed(op)
		}
		if start.IsZero() {
			start = time.Now()
		}
		if err := e.noticeInterrupt(op); err != nil {
			return err
		}
		if e.pendOp == "" { // completed in the acknowledge
			return nil
		}
		if e.ctx != nil && e.ctx.Err() != nil {
			return e.fail(op, fmt.Errorf("abandoned: %w", context.Cause(e.ctx)))
		}
		if waited := time.Since(start); waited > e.timeout {
			return e.timedOut(op, waited)
		}
	}
}

// completed ends the collective in flight, which completed. While a PE
// is away, it also looks for an interrupt: a PE rejoins by message and
// holds no collective back (a raising participant does, by not joining),
// so when the members' collectives complete without waiting, as they do
// with a core per PE, no wait would last long enough to see the rejoin.
func (e *engine) completed(op string) error {
	e.pendOp = ""
	e.done++
	if e.members == 1<<e.n-1 {
		return nil
	}
	return e.noticeInterrupt(op)
}

// noticeInterrupt answers pings and, when an interrupt is pending,
// acknowledges it and returns its *papers.InterruptError (or, when the
// collective in flight completed on some PE, completes it and defers the
// interrupt to the next operation).
func (e *engine) noticeInterrupt(op string) error {
	if err := e.answerPings(); err != nil {
		return e.fail(op, err)
	}
	c, from, ok, err := e.receive(tagInt)
	if err != nil {
		return e.fail(op, err)
	}
	if !ok || e.stale(c, from) {
		return nil
	}
	e.abandoned = false
	code, err := e.acknowledge(op, ctl{stay: true}, 1<<from, c.code)
	if err != nil {
		return err
	}
	ie := e.interruptError(op, code)
	if !e.abandoned {
		e.deferred = ie // no collective in flight, or it completed: the next operation reports it
		if e.pendOp == "" && op == "CheckInterrupt" {
			e.deferred = nil
			return ie
		}
		return nil
	}
	e.pendOp = ""
	return ie
}

// stale reports an interrupt message already acknowledged: one from a
// participant raised in an earlier epoch (its acknowledge carried it), or
// a rejoin from a PE that takes part again.
func (e *engine) stale(c ctl, from int) bool {
	if c.epoch < 0 {
		return e.members&(1<<from) != 0
	}
	return c.epoch < e.epoch
}

// receive takes a waiting control message with tag, if any.
func (e *engine) receive(tag int) (c ctl, from int, ok bool, err error) {
	ok, from, _, err = e.world.iprobe(anySource, tag)
	if err != nil || !ok {
		return ctl{}, 0, false, err
	}
	in := e.ctlBuf[ctlSize:]
	r, err := e.world.irecv(unsafe.Pointer(&in[0]), ctlSize, from, tag)
	if err != nil {
		return ctl{}, 0, false, err
	}
	for { // the message is there: the receive completes at once
		done, _, err := r.test(spins)
		if err != nil {
			return ctl{}, 0, false, err
		}
		if done {
			return getCtl(in), from, true, nil
		}
	}
}

// send sends c with tag to PE to. Control messages are small, so MPI sends
// them eagerly: the send completes locally, even to a stopped PE.
func (e *engine) send(to, tag int, c ctl) error {
	out := e.ctlBuf[:ctlSize]
	c.put(out)
	r, err := e.world.isend(unsafe.Pointer(&out[0]), ctlSize, to, tag)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(e.timeout)
	for {
		done, _, err := r.test(spins)
		if err != nil || done {
			return err
		}
		if time.Now().After(deadline) {
			r.cancel()
			return fmt.Errorf("a control message to PE %d was not sent within %v", to, e.timeout)
		}
	}
}

func (e *engine) answerPings() error {
	for {
		c, from, ok, err := e.receive(tagPing)
		if err != nil || !ok {
			return err
		}
		if err := e.send(from, tagPong, c); err != nil {
			return err
		}
	}
}

// timedOut diagnoses a wait that outlived the timeout: it pings every
// other participant, and names those that do not answer within a short
// deadline (stopped, dead, or computing without a collective: only a PE
// inside one answers). The collectives are out of step afterwards.
func (e *engine) timedOut(op string, waited time.Duration) error {
	token := uint64(time.Now().UnixNano())
	want := e.members &^ (1 << e.self)
	for _, k := range want.Members() {
		if err := e.send(k, tagPing, ctl{done: token}); err != nil {
			return e.fail(op, err)
		}
	}
	var answered peset.Set
	deadline := time.Now().Add(min(e.timeout/4+10*time.Millisecond, time.Second))
	for answered != want && time.Now().Before(deadline) {
		if err := e.answerPings(); err != nil {
			return e.fail(op, err)
		}
		c, from, ok, err := e.receive(tagPong)
		if err != nil {
			return e.fail(op, err)
		}
		if ok && c.done == token {
			answered |= 1 << from
		}
		if !ok {
			time.Sleep(50 * time.Microsecond)
		}
	}
	stall := "every other PE answers a ping: they are waiting in another operation (did every PE call the same one?)"
	if silent := want &^ answered; silent != 0 {
		stall = fmt.Sprintf("%s did not answer a ping: stopped, dead, or computing for longer than the timeout", silent)
	}
	e.broken = &papers.TimeoutError{PE: e.self, Op: op, Waited: e.timeout, Stall: stall}
	e.pendOp = ""
	return e.broken
}

// Close leaves the data network (handling what has arrived) and
// finalizes MPI.
func (e *engine) Close() error {
	err := e.ep.Close()
	// MPI_Finalize waits for every rank: one stuck, or one that failed and
	// exits without it, would hold this one there for good under a
	// launcher that does not end the job. Leave without, and fail: a
	// launcher need not report the job failed (MPICH's does not always).
	switch {
	case e.broken != nil:
		return err
	case e.failed != 0 && err == nil:
		return e.errorf("%s failed and ended without MPI_Finalize, so this PE ends without it too (MPI_Finalize would wait for it): the job has failed", e.failed)
	case e.failed != 0:
		return err
	}
	if ferr := finalize(); err == nil {
		err = ferr
	}
	return err
}

func (e *engine) failErr(err error) error {
	e.broken = err
	return err
}
