package am

import "time"

// How a wait spends the time before its condition holds. A PE with a CPU
// of its own polls without yielding, since a partner on another CPU
// answers within a microsecond and a park and wake-up through the
// scheduler cost more than that (a round trip of 2 PEs took 0.7 to 5 µs
// when the waiter yielded after 200 polls); only after spinFor does it
// sleep. When PEs outnumber CPUs (Crowded) a polling waiter takes the CPU
// from the PE it waits for, so it sleeps after a few polls: the sender's
// wake-up then hands the CPU over. The same holds whenever the PE waited
// on is not polling — computing, asleep, or without a CPU because other
// processes have the machine's: where the transport counts each PE's polls
// (beats), a spinning waiter looks every beatWindow, and sleeps once the
// PE it waits on (or, waiting on any, every other) has not polled
// meanwhile. Without that look, two goroutine PEs on a machine whose other
// CPU was busy took turns: each spun its 50 µs while the other, woken,
// waited for the CPU (a block transfer and its acknowledgment took 120 µs,
// against 1 µs).
const (
	spinFor      = 50 * time.Microsecond
	spinChecks   = 32 // polls between looks at the clock while spinning
	beatWindow   = 5 * time.Microsecond
	crowdedPolls = 16
	sleepFor     = 200 * time.Microsecond
)

// Sleeper is implemented by a transport whose Wait sleeps in the kernel
// and returns as soon as a packet arrives, a peer leaves, a full send
// buffer has room or done is closed: the TCP one's, where the kernel
// reports each connection's readiness. A wait then neither spins nor naps:
// it sleeps until the first of those or its deadline, as a blocking read
// of a socket would, and an idle PE costs no CPU. A send that finds the
// medium full sleeps the same way until it drains.
type Sleeper interface {
	Sleeps() bool
}

// Spinner is implemented by a transport whose medium a wait watches more
// cheaply from inside the transport than by polling it from here (MPI's:
// a cgo call per poll). A spinning wait calls Spin between its polls; it
// returns true once a packet has arrived for this PE, false after about a
// microsecond without one. It runs no handler: the poll that follows
// does, before the wait's condition is asked again (which may be costly:
// a barrier's looks at the board).
type Spinner interface {
	Spin() bool
}

// Crowded is implemented by a transport that knows whether its PEs
// outnumber the CPUs they run on (the in-process and shared-memory ones).
// The endpoint asks once, when it is made.
type Crowded interface {
	Crowded() bool
}

// Wait polls both networks until done() is true: the way to wait for the
// replies a handler counts. on is the PE whose messages it waits for (-1
// when several): its departure ends the wait in a *GoneError, and a
// silence — no message handled — longer than the timeout in a
// *papers.TimeoutError naming it.
func (e *Endpoint) Wait(op string, on int, done func() bool) error {
	return e.wait(op, on, done, 0)
}

// wait is Wait sleeping at most nap at a time once it has spun: a
// condition no message changes (a barrier on the board) is looked at
// again after nap. A nap of 0 is for a condition only messages change:
// sleepFor, or on a Sleeper the rest of the timeout.
func (e *Endpoint) wait(op string, on int, done func() bool, nap time.Duration) error {
	if e.cur != nil {
		return e.misuse(op, ErrInHandler)
	}
	var l spinLook
	spinning := !e.sleeps
	arrived := false // the transport's spin saw a packet: poll before done()
	for i := 1; ; i++ {
		if !arrived && done() {
			return nil
		}
		arrived = false
		if err := e.flush(); err != nil {
			return err
		}
		n, err := e.poll(PollBoth, false) // one from each, then done() again
		if err != nil {
			return err
		}
		if n > 0 { // progress: the deadline bounds a silence, not the whole wait
			i, l.start, spinning = 0, time.Time{}, !e.sleeps
			// A sleeper's Wait returns at once if more has come: polling
			// again before it would ask the kernel twice for nothing (a
			// round trip on TCP made an epoll_wait more per PE). The
			// replies the handlers queued go first.
			if !e.sleeps {
				continue
			}
			if err := e.flush(); err != nil {
				return err
			}
		}
		if done() {
			return nil
		}
		if spinning {
			if e.spin != nil && e.spin.Spin() {
				arrived = true
				continue
			}
			if e.keepSpinning(i, on, &l) {
				continue
			}
			spinning = false
		}
		if l.start.IsZero() {
			l.start = time.Now()
		}
		if err := e.stalled(op, on, l.start); err != nil {
			return e.lastLook(done, err)
		}
		e.sleep(nap, l.start)
	}
}

// lastLook ends a wait that stalled found gone or silent (err). What a PE
// sent before it left is in the inboxes since before its departure was
// seen: handle it, it may be what the wait is for.
func (e *Endpoint) lastLook(done func() bool, err error) error {
	if _, perr := e.poll(PollBoth, true); perr != nil {
		return perr
	}
	if done() {
		return nil
	}
	return err
}

// sleep waits for a packet to arrive: at most nap, or with a nap of 0
// sleepFor, or on a Sleeper the rest of the timeout of a silence that
// began at start.
func (e *Endpoint) sleep(nap time.Duration, start time.Time) {
	switch {
	case nap > 0:
		e.t.Wait(nap, e.done)
	case e.sleeps:
		e.t.Wait(e.timeout-time.Since(start), e.done)
	default:
		e.t.Wait(sleepFor, e.done)
	}
}

// beats is the count of polls of the PEs a wait on PE on waits on (0 if
// the transport does not count them).
func (e *Endpoint) beats(on int) uint32 {
	if e.beat == nil {
		return 0
	}
	return e.beat.Beats(on)
}

// spinLook is what a wait knows of its silence and of the PEs it waits on.
type spinLook struct {
	start  time.Time // the silence began (read at the first look at the clock)
	beats  uint32    // the polls of the PEs waited on, at the last look
	beatAt time.Time // the last look
}

// keepSpinning reports whether a spinning wait, at its i'th poll since
// the last progress, spins on rather than sleeps (the rules above); l is
// its last look at the clock and at the PEs it waits on (on).
func (e *Endpoint) keepSpinning(i, on int, l *spinLook) bool {
	switch {
	case e.crowded:
		return i < crowdedPolls
	case i%spinChecks != 0:
		return true
	}
	now := time.Now()
	if l.start.IsZero() {
		l.start, l.beatAt = now, now
		l.beats = e.beats(on)
		return true
	}
	if now.Sub(l.beatAt) >= beatWindow {
		b := e.beats(on)
		if e.beat != nil && b == l.beats {
			return false // they have not polled since: they need the CPU
		}
		l.beats, l.beatAt = b, now
	}
	return now.Sub(l.start) < spinFor
}
