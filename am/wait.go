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
	var start time.Time // the silence began (read at the first look at the clock)
	spinning := !e.sleeps
	var beats uint32     // the polls of the PEs waited on, at the last look
	var beatAt time.Time // the last look
	arrived := false     // the transport's spin saw a packet: poll before done()
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
			i, start, spinning = 0, time.Time{}, !e.sleeps
			continue
		}
		if done() {
			return nil
		}
		if spinning {
			if e.spin != nil && e.spin.Spin() {
				arrived = true
				continue
			}
			if e.crowded {
				if i < crowdedPolls {
					continue
				}
			} else if i%spinChecks != 0 {
				continue
			} else if now := time.Now(); start.IsZero() {
				start, beatAt = now, now
				beats = e.beats(on)
				continue
			} else if now.Sub(beatAt) < beatWindow {
				if now.Sub(start) < spinFor {
					continue
				}
			} else if b := e.beats(on); e.beat == nil || b != beats {
				beats, beatAt = b, now
				if now.Sub(start) < spinFor {
					continue
				}
			}
			spinning = false
		}
		if start.IsZero() {
			start = time.Now()
		}
		if err := e.stalled(op, on, start); err != nil {
			// What a PE sent before it left is in the inboxes since before
			// its departure was seen: handle it, it may be what we wait for.
			if _, perr := e.poll(PollBoth, true); perr != nil {
				return perr
			}
			if done() {
				return nil
			}
			return err
		}
		switch {
		case nap > 0:
			e.t.Wait(nap, e.done)
		case e.sleeps:
			e.t.Wait(e.timeout-time.Since(start), e.done)
		default:
			e.t.Wait(sleepFor, e.done)
		}
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
