package papers

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/ttlpapers/ttlpapers/peset"
)

// Sentinel errors. They carry no prefix of their own: papers returns them
// wrapped, after "papers: PE k: operation: ", so test for them with
// errors.Is.
var (
	// ErrClosed: the PE was closed; open the port again to continue.
	ErrClosed = errors.New("PE is closed: open the port again to continue")
	// ErrLeft: the PE has left the group (Leave, Abort); Rejoin first.
	ErrLeft = errors.New("PE has left the group (Leave): call Rejoin first")
	// ErrSplit: a split-phase barrier is pending; QueryBarrier until it is
	// true, or CompleteBarrier, first.
	ErrSplit = errors.New("a split-phase barrier is in progress: call QueryBarrier until it is true, or CompleteBarrier, first")
	// ErrArgument is wrapped by every error that reports an argument no PE
	// count can satisfy.
	ErrArgument = errors.New("invalid argument")
	// ErrNoLines: on an engine (MPI) there are no shared data lines to
	// read at any time; the data lines travel with split-phase barriers,
	// and SenseNAND reads their NAND right after one completes.
	ErrNoLines = errors.New("no data lines on this substrate (MPI): SenseNAND reads the NAND carried by the last split-phase barrier (SetData, StartBarrier, QueryBarrier or CompleteBarrier), before any other operation")
	// ErrAbsent is wrapped by *AbsentError: a collective needed a value from
	// a PE that does not take part.
	ErrAbsent = errors.New("PE not taking part")
)

// PEError is an error of PE PE's operation in package Pkg: its message
// is "Pkg: PE k: " and Err's. The layers on papers (am, splitc, strata,
// mpi) make theirs with Errorf too, so that a runner reporting several
// PEs' errors sees which name their PE (NamePE) without reading their text.
type PEError struct {
	Pkg string
	PE  int
	Err error
}

func (e *PEError) Error() string { return e.Pkg + ": PE " + strconv.Itoa(e.PE) + ": " + e.Err.Error() }
func (e *PEError) Unwrap() error { return e.Err }

// ErrorPE is the PE the error is about.
func (e *PEError) ErrorPE() int { return e.PE }

// Errorf returns a *PEError of PE pe in package pkg, its Err formatted as
// by fmt.Errorf (%w wraps).
func Errorf(pkg string, pe int, format string, a ...any) error {
	return &PEError{Pkg: pkg, PE: pe, Err: fmt.Errorf(format, a...)}
}

// ErrorPE is the PE the error is about.
func (e *TimeoutError) ErrorPE() int { return e.PE }

// ErrorPE is the PE the error is about.
func (e *InterruptError) ErrorPE() int { return e.PE }

// ErrorPE is the PE the error is about.
func (e *AbsentError) ErrorPE() int { return e.PE }

// TimeoutError reports a wait that did not complete within its deadline:
// on the board, on MPI, or on the data network (package am). It is a
// timeout in the standard library's sense: Timeout reports true and
// errors.Is(err, os.ErrDeadlineExceeded) holds.
type TimeoutError struct {
	PE     int // the waiting PE
	Op     string
	Waited time.Duration
	// Missing are the PEs the wait was held up by, when the waiter knows
	// them (bit k: PE k): the PE a data-network wait was on, after a
	// roll call the PEs whose data line no PE pulled low, or the PEs a
	// check-in waited for that did not answer; 0 when unknown.
	Missing peset.Set
	// Stall says who held the operation up, when the backend knows (the
	// emulator and the data network do; real hardware does not).
	Stall string
	// RollCall reports that the PE held a roll call after the wait (a
	// barrier's): Missing are then the PEs not waiting with the others.
	RollCall bool
	// DataNet, when the board's roll call could not name one PE and the
	// data network could, or when Dead, is what it knows of each PE in
	// Missing.
	DataNet []Absence
	// Dead reports that the wait ended before its timeout, after Waited,
	// because the data network knew the PEs of Missing had died (went
	// without leaving): a killed PE's connections end when it dies,
	// while the board can tell only after the timeout.
	Dead bool
}

func (e *TimeoutError) Error() string {
	if e.Dead {
		return fmt.Sprintf("papers: PE %d: %s cannot complete: after %v the data network found %s dead, before the timeout: %s", e.PE, e.Op, e.Waited.Round(time.Millisecond), e.Missing, describeAbsent(e.DataNet))
	}
	s := fmt.Sprintf("papers: PE %d: %s did not complete within %v", e.PE, e.Op, e.Waited)
	switch {
	case e.Stall != "":
		s += ": " + e.Stall
		if len(e.DataNet) > 0 {
			s += "; the data network says: " + describeAbsent(e.DataNet)
		}
	case e.RollCall && len(e.DataNet) > 0:
		s += fmt.Sprintf(": the roll call that followed could not name one PE on the board, and the data network names %s: %s", e.Missing, describeAbsent(e.DataNet))
	case e.RollCall && e.Missing != 0:
		s += fmt.Sprintf(": %s did not answer the roll call that followed (its data line stayed high): it is stopped, killed, unplugged, or returned from its program", e.Missing)
	case e.RollCall:
		s += ": another PE has not arrived, and every data line answered the roll call that followed, so the board cannot say which PE (a dead PE's last data can hold its line low; beyond 4 PEs, PEs share lines): not started, crashed, stopped, unplugged, or computing longer than the timeout"
	case e.Op == "interrupt acknowledge":
		s += ": a PE has not acknowledged the interrupt (P_NAK still high): it is computing without a barrier for longer than the timeout, or it died without raising or leaving; the board cannot say which PE"
	default:
		s += ": another PE has not arrived (not started, crashed, unplugged, or computing longer than the timeout; raise the timeout if so)"
	}
	return s
}

// Timeout reports true: the error is a deadline running out.
func (e *TimeoutError) Timeout() bool { return true }

// Is makes errors.Is(err, os.ErrDeadlineExceeded) true, as for the
// standard library's deadlines.
func (e *TimeoutError) Is(target error) bool { return target == os.ErrDeadlineExceeded }

// InterruptError is returned by the operation during which a parallel
// interrupt was acknowledged. The board is back in step afterwards: every PE
// got the same error from its own operation and the next operation of every
// PE pairs with the others' next. Every acknowledge ends with a vote of the
// PEs that stay, so the error also says how the group changed: PEs that
// left (Leave, Abort — a PE whose program failed), PEs that joined
// (Rejoin), and the participants from now on.
type InterruptError struct {
	PE      int
	Op      string
	Code    uint8     // the 4-bit code (the OR of the codes, if several PEs raised)
	Left    peset.Set // PEs that left the group with this interrupt
	Joined  peset.Set // PEs that joined it
	Members peset.Set // the participants afterwards
	// Returned are the PEs of Left whose program returned (Finish): the
	// code was ReturnCode. A PE that returns while the others compute is
	// a fault of the program, not of the PC: it names the PE as such.
	Returned peset.Set
}

func (e *InterruptError) Error() string {
	s := fmt.Sprintf("papers: PE %d: %s interrupted by a parallel interrupt with code %#x", e.PE, e.Op, e.Code)
	if e.Returned != 0 {
		s += fmt.Sprintf("; %s returned from the program while the others went on (left the group)", e.Returned)
	}
	if left := e.Left &^ e.Returned; left != 0 {
		s += fmt.Sprintf("; %s left the group", left)
	}
	if e.Joined != 0 {
		s += fmt.Sprintf("; %s joined the group", e.Joined)
	}
	return s
}

// change is what the last interrupt acknowledge did to the group.
type change struct {
	left, joined peset.Set
}

// interruptError describes the interrupt just acknowledged with code.
func (p *PE) interruptError(op string, code uint8) *InterruptError {
	e := &InterruptError{PE: p.self, Op: op, Code: code, Left: p.change.left, Joined: p.change.joined, Members: p.members}
	if code == ReturnCode {
		e.Returned = e.Left
	}
	return e
}

// AbsentError reports a collective that needed a value from PEs that do not
// take part: a departed root or source, or (Gather) the slots of departed
// PEs. Every participant returns the same error, so the cluster stays in
// step. The census (Config.CensusEvery) reports a participant that went
// transparent without announcing it the same way, Why "participant". It
// wraps ErrAbsent.
type AbsentError struct {
	PE      int
	Op      string
	Missing peset.Set // the PEs whose values were needed
	Why     string    // what they were needed as: "root", "source", "value", "participant"
	// For a census (Why "participant"): the results of calls Proven+1 to
	// Calls of the collectives, counted from 1 at Open, may lack the
	// missing PEs' values; the last census found them present when
	// Proven calls had returned (0: at check-in).
	Proven, Calls uint64
}

func (e *AbsentError) Error() string {
	switch e.Why {
	case "participant":
		s := fmt.Sprintf("papers: PE %d: %s: %s did not answer the census of the participants: its port reads transparent (cable unplugged, PC off, port released without leaving", e.PE, e.Op, e.Missing)
		if e.Op == endOp {
			s += ", or its program returned and stopped waiting for the others after the timeout"
		}
		s += "); it no longer takes part, and "
		switch {
		case e.Calls <= e.Proven:
			return s + "no result lacks its values yet"
		case e.Proven == 0:
			return s + fmt.Sprintf("every result since check-in (calls 1 to %d of the collectives) may lack its values", e.Calls)
		}
		return s + fmt.Sprintf("the results of calls %d to %d of the collectives (since the census after call %d) may lack its values", e.Proven+1, e.Calls, e.Proven)
	case "value":
		return fmt.Sprintf("papers: PE %d: %s: %s took no part (left the group): their slots hold zero, the participants' are filled", e.PE, e.Op, e.Missing)
	}
	return fmt.Sprintf("papers: PE %d: %s: %s %s does not take part (it left the group, or its program failed): name a participant (Participants)", e.PE, e.Op, e.Why, e.Missing)
}

func (e *AbsentError) Unwrap() error { return ErrAbsent }
