//go:build mpi

package mpi

import (
	"fmt"
	"time"

	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/peset"
	"github.com/ttlpapers/ttlpapers/substrate"
)

// Parallel interrupts: a raiser tells every participant, and they agree in
// an acknowledge on the code, who stays, and the collective in flight.

func (e *engine) interruptError(op string, code uint8) *papers.InterruptError {
	return &papers.InterruptError{PE: e.self, Op: op, Code: code, Left: e.lastLeft, Joined: e.lastJoined, Members: e.members}
}

func (e *engine) CheckInterrupt(op string) error {
	if err := e.start(op); err != nil {
		return err
	}
	return e.noticeInterrupt(op)
}

func (e *engine) Raise(op string, code uint8, depart bool) (uint8, peset.Set, error) {
	if err := e.start(op); err != nil {
		return 0, 0, err
	}
	rejoin := e.left
	if rejoin {
		e.drain()
	}
	msg := ctl{epoch: e.epoch, code: code}
	if rejoin {
		msg.epoch = -1
	}
	for k := range e.n {
		if k != e.self {
			if err := e.send(k, tagInt, msg); err != nil {
				return 0, 0, e.fail(op, err)
			}
		}
	}
	delivered, err := e.acknowledge(op, ctl{code: code, stay: !depart}, 1<<e.self, code)
	if err != nil {
		return 0, 0, err
	}
	e.left = depart
	return delivered, e.members, nil
}

// drain discards the interrupt messages a PE that has left received: the
// acknowledges it was not part of.
func (e *engine) drain() {
	for {
		if _, _, ok, err := e.receive(tagInt); err != nil || !ok {
			return
		}
	}
}

// acknowledge runs a parallel interrupt's acknowledge with the other
// participants and returns the delivered code (the OR of the raisers').
// Every participant sends every other an acknowledge message — the
// raisers it knows (fixed when it first sends), whether it stays, and its
// count of completed collectives and whether one is in flight — and waits
// for the acknowledges of every participant and of every raiser any of them
// names (a PE rejoining, which learns the epoch and the participants from
// the first acknowledge it gets). All of them see the same messages, so they
// agree on the code, the new participants, and the fate of the collective
// that was in flight: when some participant cannot have joined it (the
// raiser), it is abandoned on every PE and the operation returns the
// *papers.InterruptError; when every participant has joined it, it
// completes everywhere and the interrupt is returned by the next
// operation. Then every PE that stays creates the next epoch's
// communicator of the participants.
func (e *engine) acknowledge(op string, mine ctl, raisers peset.Set, code uint8) (uint8, error) {
	self := peset.Of(e.self)
	mine.epoch, mine.raisers, mine.members, mine.done, mine.ticket = e.epoch, raisers, e.members, e.done, e.ticket
	mine.pending = e.pendOp != ""
	known := !e.left // a PE rejoining learns the participants from the first acknowledge
	var sent peset.Set
	targets := (e.members | raisers) &^ self
	t := acks{code: code, base: e.ticket, allPending: true}
	if mine.stay {
		t.stays = self
	}
	if known {
		t.count(e.done, mine.pending)
	}
	start := time.Now()
	for {
		if known {
			for _, k := range (targets &^ sent).Members() {
				if err := e.send(k, tagAck, mine); err != nil {
					return 0, e.fail(op, err)
				}
				sent |= 1 << k
			}
			if targets&^t.got == 0 {
				break
			}
		}
		if err := e.answerPings(); err != nil {
			return 0, e.fail(op, err)
		}
		c, from, ok, err := e.receive(tagAck)
		if err != nil {
			return 0, e.fail(op, err)
		}
		if !ok {
			if time.Since(start) > e.timeout {
				return 0, e.failErr(e.ackTimeout(known, targets&^t.got))
			}
			continue
		}
		if !known {
			known = true
			e.epoch, e.members = c.epoch, c.members
			mine.epoch, mine.members = c.epoch, c.members
			targets |= c.members &^ self
		}
		if c.epoch != e.epoch {
			continue // an acknowledge of an epoch this PE was not part of
		}
		targets |= c.raisers &^ self
		t.add(c, from, e.members)
	}
	if err := e.settle(op, t.hi, t.lo == t.hi && t.allPending); err != nil {
		return 0, err
	}
	if err := e.nextEpoch(op, t); err != nil {
		return 0, err
	}
	return t.code, nil
}

// acks tallies the acknowledges of an interrupt, this PE's own included.
type acks struct {
	got, stays peset.Set // the PEs heard from, and those that stay
	code       uint8     // the OR of their codes
	base       uint64    // the next epoch's: the highest ticket any of them joined
	// The participants' collective counts: the lowest, the highest, and
	// whether every one has a collective in flight.
	lo, hi              uint64
	allPending, counted bool
}

// count adds a participant's count of completed collectives.
func (t *acks) count(done uint64, pending bool) {
	if !t.counted {
		t.lo, t.hi, t.counted = done, done, true
	}
	t.lo, t.hi = min(t.lo, done), max(t.hi, done)
	t.allPending = t.allPending && pending
}

// add adds PE from's acknowledge c; members are the epoch's participants.
func (t *acks) add(c ctl, from int, members peset.Set) {
	t.got |= 1 << from
	t.base = max(t.base, c.ticket)
	t.code |= c.code
	if c.stay {
		t.stays |= 1 << from
	}
	if members&(1<<from) != 0 {
		t.count(c.done, c.pending)
	}
}

// ackTimeout is the error of an acknowledge that missing did not send
// within the timeout (known: this PE knew the participants).
func (e *engine) ackTimeout(known bool, missing peset.Set) error {
	if !known {
		return &papers.TimeoutError{PE: e.self, Op: "interrupt acknowledge", Waited: e.timeout, Stall: "no participant acknowledged this PE's interrupt (are they all computing without a collective, stopped or dead?)"}
	}
	return &papers.TimeoutError{PE: e.self, Op: "interrupt acknowledge", Waited: e.timeout, Stall: missing.String() + " did not acknowledge the interrupt: stopped, dead, or computing for longer than the timeout"}
}

// nextEpoch starts the epoch the acknowledges t agreed on: its
// participants are those that stay, and each of them makes its
// communicator.
func (e *engine) nextEpoch(op string, t acks) error {
	self := peset.Of(e.self)
	e.lastLeft, e.lastJoined = e.members&^t.stays, t.stays&^e.members
	if t.code == substrate.AbortCode {
		e.failed |= e.lastLeft
	}
	e.members = t.stays
	e.epoch++
	e.done = 0 // counted per epoch: a PE that rejoins has missed some
	e.base = t.base
	if t.stays&self == 0 {
		return nil
	}
	e.ranks = t.stays.Members()
	data, err := e.subset(op)
	if err != nil {
		return e.fail(op, err)
	}
	e.data = data
	e.coll.configure(data, e.ranks, e.self)
	return nil
}

// subset creates the communicator of the participants of the new epoch.
// MPI_Comm_create_group has no nonblocking form: every participant has just
// acknowledged, so it returns at once, unless one stops or dies in between;
// then, as the call cannot be abandoned, a watchdog ends the process with an
// error after the timeout, and mpirun ends the job.
func (e *engine) subset(op string) (comm, error) {
	self, timeout, members := e.self, e.timeout, e.members.String()
	defer watchdog(timeout, func() string {
		return fmt.Sprintf("papers: PE %d: %s: the communicator of %s was not created within %v after the interrupt acknowledge: one of them stopped or died; ending this process", self, op, members, timeout)
	})()
	return e.groups.subset(e.ranks, int(e.epoch)%32768)
}

// settle decides the collective in flight after an acknowledge: top is the
// most collectives any participant completed, next whether every
// participant had completed top and had the next one in flight (so it
// completes everywhere). A collective that completed somewhere completes
// here too; any other is abandoned.
func (e *engine) settle(op string, top uint64, next bool) error {
	if e.pendOp == "" {
		return nil
	}
	if e.done == top && !next {
		e.abandoned = true
		if e.inColl {
			e.coll.abandon()
		}
		return nil
	}
	deadline := time.Now().Add(e.timeout)
	for {
		done, err := e.test(spins)
		if err != nil {
			return e.fail(op, err)
		}
		if done {
			e.done++
			e.pendOp = ""
			return nil
		}
		if time.Now().After(deadline) {
			return e.failErr(&papers.TimeoutError{PE: e.self, Op: op, Waited: e.timeout, Stall: "the collective every PE had joined before the interrupt did not complete"})
		}
	}
}
