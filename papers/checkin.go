package papers

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"time"

	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/peset"
)

// checkIn waits, until timeout, for every other PE, whatever state earlier
// runs left the board in, then tests every PE's data lines
// (docs/protocol.md, "Check-in").
//
// Each PE announces its arrival with a parallel interrupt, and every PE
// already checking in acknowledges it: the acknowledge puts PEs that stand
// at any point of any barrier sequence back in step, and its closing vote
// says who is here. Until the vote counts every PE, a PE waits for the next
// arrival's interrupt; a port that holds the barriers (not started, parked
// by an earlier run's Close, killed mid-barrier) holds the acknowledge
// until its PE comes, and a latched interrupt of an earlier run is
// acknowledged like an arrival.
func (p *PE) checkIn(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	defer func(t time.Duration) { p.timeout, p.checking, p.ackBound, p.ackHeld = t, false, 0, false }(p.timeout)
	op := p.timeout
	p.timeout, p.checking = timeout, true
	p.members, p.ident = 0, p.ownIdentity()
	code, err := p.arrive(timeout, deadline)
	if err := p.gather(code, err, op, timeout, deadline); err != nil {
		return err
	}
	p.timeout = max(time.Until(deadline), time.Millisecond)
	if err := p.testLines("check-in", 0); err != nil {
		return p.checkInLinesFailed(err, timeout)
	}
	p.port.WriteControl(lpt.NAK)
	p.change = change{}
	return nil
}

// arrive is check-in's first step: it holds every barrier (both strobes
// low) with P_IRQ low, and gives a PE of an earlier program on this board,
// between its last barrier and its Close, time to close before this
// arrival's interrupt, joining another arrival's meanwhile. Then it raises:
// P_IRQ rises even if an earlier run left it high. It returns the code of
// the interrupt it acknowledged.
func (p *PE) arrive(timeout time.Duration, deadline time.Time) (uint8, error) {
	p.last = lpt.LG | lpt.DataMask
	p.port.WriteData(p.last)
	p.port.WriteControl(0)
	grace := min(arrivalGrace, timeout/4)
	if p.fresh {
		grace = 0
	}
	err := p.awaitArrival(time.Now().Add(grace))
	p.timeout = time.Until(deadline)
	var te *TimeoutError
	switch {
	case err == nil:
		return p.acknowledge(false, 0)
	case errors.As(err, &te):
		p.port.WriteControl(lpt.NAK | lpt.IRQ)
		return p.acknowledge(true, 0)
	}
	return 0, err
}

// gather is check-in's second step, from the acknowledge of an arrival
// (its code and error): it votes on who is here and agrees on the run,
// and while that does not count every PE it waits for the next arrival,
// voting again after each. Once a vote has counted PEs, an acknowledge's
// wait for every P_NAK is bounded by the operation timeout op (ackWait).
func (p *PE) gather(code uint8, err error, op, timeout time.Duration, deadline time.Time) error {
	voted := false
	var pending error // found before every PE came (agree)
	for {
		var ie *InterruptError
		if err != nil && !errors.As(err, &ie) {
			if pending != nil {
				return pending
			}
			return p.checkInFailed(err, timeout, voted)
		}
		if ie != nil {
			code = ie.Code
		}
		if err := p.departed(code); err != nil {
			return p.checkInFailed(err, timeout, voted)
		}
		code = 0
		// The acknowledge's own vote counts every PE that acknowledged,
		// and a PE still finishing an earlier program acknowledges too:
		// a vote of its own counts the PEs checking in.
		p.timeout = time.Until(deadline)
		var mask peset.Set
		mask, err = p.vote("check-in", true)
		if errors.As(err, &ie) && time.Now().Before(deadline) {
			continue // another PE arrived during the vote: vote again
		}
		if err != nil {
			return p.checkInFailed(err, timeout, voted)
		}
		p.members, voted = mask, true
		p.ackBound = op
		pending = nil
		if err = p.agree(mask); err != nil && !errors.As(err, &ie) {
			if wait, werr := p.waitForOthers(err, mask); werr != nil {
				err = werr
			} else if wait {
				pending, err = err, nil
			}
		}
		if errors.As(err, &ie) && time.Now().Before(deadline) {
			continue // another PE arrived: vote again
		}
		if err != nil {
			return p.checkInFailed(err, timeout, voted)
		}
		if pending == nil && mask&p.all() == p.all() { // more is another PE count, or a line stuck at 0: agree failed
			return nil
		}
		if err = p.awaitArrival(deadline); err == nil {
			p.timeout = time.Until(deadline)
			code, err = p.acknowledge(false, 0)
		}
	}
}

// checkInLinesFailed is check-in's error when its test of the data lines
// failed: a *LineError as it is; another, with what a departure's
// interrupt taken meanwhile says, as a failed check-in.
func (p *PE) checkInLinesFailed(err error, timeout time.Duration) error {
	var ie *InterruptError
	if errors.As(err, &ie) {
		if derr := p.departed(ie.Code); derr != nil {
			err = derr
		}
	}
	var le *LineError
	if !errors.As(err, &le) {
		err = p.checkInFailed(err, timeout, true)
	}
	return err
}

// leaveCheckIn announces the departure of a PE whose check-in its context
// ended (a stop signal), bounded by the timeout, so that the others fail
// at once naming it instead of waiting out their check-in: it raises
// leaveCode, takes part in the acknowledge, votes alone that it leaves
// (departed) and goes transparent. It reports whether it departed; if
// not, Open parks the port.
func (p *PE) leaveCheckIn() (departed bool) {
	p.done = nil      // the context has ended: the announcement's waits have only the timeout
	p.checking = true // its votes as wide as the others' check-in votes
	defer func() { p.checking = false }()
	// An arrival's interrupt (this PE's own, or another's) may be taken
	// first: the departure is announced again after it, at most once for
	// each PE that can arrive.
	for range lpt.MaxPEs {
		p.port.WriteControl(lpt.NAK | lpt.IRQ)
		_, err := p.acknowledge(true, leaveCode)
		if err == nil {
			_, err = p.vote("check-in", true) // departed's vote: "I am leaving"
		}
		if _, arrival := errors.AsType[*InterruptError](err); arrival {
			continue
		}
		if err != nil {
			return false
		}
		p.goTransparent()
		return true
	}
	return false
}

// leaveCode is the interrupt code of a PE leaving during check-in
// (leaveCheckIn). No other PE checking in raises it: an arrival raises 0,
// and a latched interrupt of an earlier run reads as 0 (no PE drives a
// code).
const leaveCode = 0x5

// departed names, after check-in acknowledged an interrupt with code, the
// PEs that left: those leaving during check-in (code leaveCode: one more
// vote, in which only they vote), and those an earlier check-in vote
// counted that the acknowledge's vote did not (gone transparent:
// unplugged, or their port released).
func (p *PE) departed(code uint8) error {
	left := p.change.left
	if code == leaveCode {
		m, err := p.vote("check-in", false)
		if err != nil {
			return err
		}
		left |= m
	}
	if left == 0 {
		return nil
	}
	e := p.interruptError("check-in", code)
	e.Left = left
	return e
}

// arrivalGrace is how long an arriving PE holds the board before it
// announces itself (see checkIn): far longer than a program takes from its
// last barrier to its Close, short beside a person starting PCs by hand.
const arrivalGrace = 100 * time.Millisecond

// awaitArrival waits, with P_NAK high, for the interrupt of a PE that
// arrives, until deadline. The LED is red meanwhile.
func (p *PE) awaitArrival(deadline time.Time) error {
	p.port.WriteData(p.waitingLED())
	defer p.port.WriteData(p.last)
	w, _ := p.port.(lpt.Waiter)
	for {
		if p.interruptPending() {
			return nil
		}
		if err := p.port.Err(); err != nil {
			return p.errorf("check-in: port failed: %w", err)
		}
		left := time.Until(deadline)
		if left <= 0 {
			return &TimeoutError{PE: p.self, Op: "check-in"}
		}
		select {
		case <-p.done:
			return p.errorf("check-in abandoned: %w", context.Cause(p.ctx))
		default:
		}
		if w != nil {
			p.port.WriteControl(lpt.SEL | lpt.NAK) // Busy shows the interrupt flag while blocked
			w.Wait(p.port.ReadStatus(), 0, min(left, 10*time.Millisecond), p.done)
			p.port.WriteControl(lpt.NAK)
		} else {
			time.Sleep(min(left, 200*time.Microsecond))
		}
	}
}

// checkInFailed turns the failure of a check-in wait into the error Open
// returns: who did not come, and what that can mean.
func (p *PE) checkInFailed(err error, timeout time.Duration, voted bool) error {
	var te *TimeoutError
	if !errors.As(err, &te) {
		return err
	}
	e := &TimeoutError{PE: p.self, Op: "check-in", Waited: timeout}
	others := p.all() &^ (1 << p.self)
	missing := others &^ p.members
	switch {
	case voted && p.members&(1<<p.self) == 0:
		e.Stall = fmt.Sprintf("this PE's own vote did not reach the board: its cable is unplugged or its data line %s is stuck high or open (papersctl selftest tests them)", dataLine(p.self%4))
	case te.Op == "check-in" && voted && missing != 0: // waited for an arrival that did not come
		e.Missing = missing
		if missing.Len() == 1 {
			k := missing.Members()[0]
			e.Stall = fmt.Sprintf("PE %d did not answer: its program was not started (a port that an earlier run's departure left transparent reads so too), or its cable is unplugged, or its data line %s is stuck high", k, dataLine(k%4))
		} else {
			e.Stall = fmt.Sprintf("%s did not answer: their programs were not started (a port that an earlier run's departure left transparent reads so too), or their cables are unplugged", missing)
		}
		if missing == others && missing != 0 {
			e.Stall += ", or this PE's own cable is unplugged"
		}
	case voted && p.ackHeld: // see ackWait
		e.Waited = p.ackBound
		e.Stall = fmt.Sprintf("a PE of this check-in stopped answering: after a vote had counted %s, an acknowledge waited %v for every port's P_NAK, which only a PE that has started can hold (killed, stopped, or its PC hung), or a program of an earlier run still using the board; the board cannot say which: candidates %s", p.members, p.ackBound, others)
	default: // a port held the acknowledge or a barrier
		if !voted || missing == 0 { // every PE voted, yet the check-in did not end: any of them
			missing = others
		}
		e.Stall = fmt.Sprintf("a port holds the board: a PE whose program was not started (its port at power-on, or parked by an earlier run's Close) or was killed mid-operation; the board cannot say which PE: candidates %s", missing)
		if te.Stall != "" {
			e.Stall += " (" + te.Stall + ")"
		}
	}
	return e
}

// dataLine names data line Di and its DB-25 pin.
func dataLine(i int) string { return dataPin(i).String() }

// LineError reports a data line that check-in found broken: one that
// reads low at the board while every PE drives it high (stuck at 0 on
// some PE's cable: the NAND cannot tell which PE), or one PE's line that
// does not go low when that PE drives it low (stuck at 1, or open).
type LineError struct {
	PE    int      // the PE that found it
	Line  lpt.Line // the data line
	Stuck uint8    // the level it is stuck at, 0 or 1
	// Faulty is the PE whose line it is, or -1 when the board cannot
	// tell; Candidates then lists the PEs it may be.
	Faulty     int
	Candidates peset.Set
	// Op is the test's: "check-in", or the proof's (proof.go); after
	// check-in the results of calls Since+1 to Calls of the collectives
	// may be wrong (the lines passed when Since calls had returned, and
	// Calls had when this test ran).
	Op           string
	Since, Calls uint64
}

func (e *LineError) Error() string {
	var s string
	if e.Faulty >= 0 {
		s = fmt.Sprintf("papers: PE %d: %s: PE %d's data line %s is stuck at %d (or open): it stays high while PE %d drives it low; run papersctl selftest on the board", e.PE, e.Op, e.Faulty, e.Line, e.Stuck, e.Faulty)
	} else {
		s = fmt.Sprintf("papers: PE %d: %s: data line %s is stuck at %d at the board: it reads low while every PE drives it high; the board's NAND cannot say whose cable (candidates %s) or whether the board's own input is at fault; run papersctl selftest on the board", e.PE, e.Op, e.Line, e.Stuck, e.Candidates)
	}
	if e.Calls > e.Since {
		s += fmt.Sprintf("; the results of calls %d to %d of the collectives (since the lines last passed) may be wrong", e.Since+1, e.Calls)
	}
	return s
}

// testLines checks every PE's four data lines with n+1 NANDs, which every
// PE runs and judges alike: all drive 0xf (a line that still reads low at
// the board is stuck at 0 somewhere), then each PE in turn drives 0 while
// the others drive 0xf (a line of that PE that stays high is stuck at 1 or
// open). A stuck line would otherwise give wrong NANDs without an error.
func (p *PE) testLines(op string, calls uint64) error {
	if p.noLineTest {
		return nil
	}
	r, err := p.nand(op, lpt.DataMask)
	if err != nil {
		return err
	}
	if r != 0 {
		l, _ := lpt.LineFor(lpt.Data, 1<<bits.TrailingZeros8(r))
		return &LineError{PE: p.self, Line: l, Stuck: 0, Faulty: -1, Candidates: p.members, Op: op, Since: p.linesOK, Calls: calls}
	}
	for k := range p.n {
		if p.members&(1<<k) == 0 {
			continue // left: transparent, it drives no line
		}
		x := uint8(lpt.DataMask)
		if k == p.self {
			x = 0
		}
		r, err := p.nand(op, x)
		if err != nil {
			return err
		}
		if bad := ^r & lpt.DataMask; bad != 0 {
			l, _ := lpt.LineFor(lpt.Data, 1<<bits.TrailingZeros8(bad))
			return &LineError{PE: p.self, Line: l, Stuck: 1, Faulty: k, Op: op, Since: p.linesOK, Calls: calls}
		}
	}
	// Leave the lines high, as Open always has: the last PE drove them
	// low, which a roll call would read as every PE answering.
	return p.SetData(lpt.DataMask)
}

// rollCall is what a PE whose barrier wait timed out does before it says
// so. Every PE waiting at the same barrier times out at about the same time
// and does the same: it pulls its own data line (D self mod 4) low and reads
// the NAND for rollCallFor, taking every line that any PE pulled low in its
// second half. A PE
// on a line no one pulled is not waiting with the others: stopped, killed,
// returned from its program (a parked port drives its lines high), or
// unplugged. It returns those PEs; none when every line answered (a dead
// PE's last data may hold its line low, and beyond 4 PEs lines are shared),
// and then the board cannot say which PE. Meanwhile it asks the data
// network, if the PE has one, which PEs do not answer there, and returns
// what it knows of them (dn): every PE waiting with the others listens
// to it during its own roll call.
func (p *PE) rollCall() (missing peset.Set, dn []Absence) {
	p.port.WriteData(p.waitingLED()&^lpt.DataMask | lpt.DataMask&^(1<<(p.self%4)))
	net := p.datanet
	if net != nil {
		net.Ask(p.all() &^ (1 << p.self))
	}
	// Only the second half counts: a PE that has not timed out yet still
	// drives its last NAND's data for up to the spread of the timeouts,
	// and one that has finished its roll call keeps its line low (it does
	// not write its data again; spmd's stall keeps the nybble).
	var seen uint8
	d := rollCallFor(p.timeout)
	start := time.Now()
	for now := start; now.Sub(start) < d; now = time.Now() {
		if now.Sub(start) >= d/2 {
			seen |= p.port.ReadStatus() >> lpt.InputShift & lpt.DataMask
		}
		if net != nil {
			net.Listen()
		}
		time.Sleep(200 * time.Microsecond)
	}
	for k := range p.n {
		if k != p.self && seen&(1<<(k%4)) == 0 {
			missing |= 1 << k
		}
	}
	if net != nil {
		dn = net.Absent()
	}
	return missing, dn
}

// rollCallFor is how long a roll call lasts: every other PE waiting at the
// barrier must time out within half of it (they started waiting within a
// barrier's time of each other), and it is short beside the timeout.
func rollCallFor(timeout time.Duration) time.Duration {
	return min(timeout/2, 500*time.Millisecond)
}
