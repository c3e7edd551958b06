// Package strata is MIT's Strata 2.0 communication library (Brewer and
// Blumofe, 1994) on TTL_PAPERS: both its control network and its data
// network.
//
// Strata was written for the CM-5, whose control network does barriers,
// global ORs, scans, reductions and broadcasts in hardware. Here every one
// of those operations is built from the two things the TTL_PAPERS board
// does: a barrier, and the 4-bit NAND of every PE's data lines that each
// barrier presents as a side effect. The parallel interrupt stops every PE
// when one exits with a non-zero code.
//
// The data network's half — active messages (RegisterHandler, the
// Send…Poll… family, the Poll… calls) and block transfers (ports,
// SendBlockXferPollBoth, AsyncBlockXfer) — runs on the PE's data-network
// endpoint (package am), beside the board.
//
// Each PE holds an *S (from Init, or through Program) and
// calls the collective operations in the same order as the others. Every
// operation that waits returns an error: a timeout, an abort because
// another PE exited, or a misuse. docs/strata.md maps every Strata name to
// its Go form.
package strata

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/ttlpapers/ttlpapers/am"
	"github.com/ttlpapers/ttlpapers/papers"
)

// Word is Strata's generic 32-bit quantity; DoubleWord its 64-bit one.
type (
	Word       = uint32
	DoubleWord = uint64
)

// asyncLine is the data line that carries the asynchronous global OR
// between operations (D3): a PE drives it low while its bit is true.
const asyncLine = 0x8

// S is one PE's Strata state. Its methods must be called from the PE's
// own goroutine, and the collective ones in the same order on every PE.
type S struct {
	pe   *papers.PE
	self int
	n    int
	log  int // log2 of n rounded up

	seg   Segment
	async bool // this PE's asynchronous-global-OR bit
	err   error
	done  bool

	// the split-phase operation in progress and its NAND sequence; which
	// kinds have completed one, and the last global OR's result
	pend     pending
	had      [numPending]bool
	orResult bool
	sq       seq
	cv       combineState
	bc       broadcastState

	rng    uint32
	nands  uint64 // NANDs run by Strata's own sequences
	nands0 uint64 // the papers count at Init

	q       printQueue
	stdout  io.Writer
	stderr  io.Writer
	logging LogFlags

	clock clock
	trace trace

	// the data network (datanet.go, xfer.go)
	ep       *am.Endpoint
	netUsed  bool
	handlers []Handler // by HandlerID, for the ports' handlers
	ports    []Port    // the port table, made on first use
	abx      []abx     // asynchronous block transfers
}

// Init makes a Strata PE of a papers PE that has checked in (papers.Open).
// Like StrataInit it sets the random seed to Self+1 and this PE's
// asynchronous-global-OR bit to true. The S owns pe from now on; Exit
// closes it.
func Init(pe *papers.PE) (*S, error) {
	if pe == nil {
		return nil, errors.New("strata: Init needs an open *papers.PE")
	}
	s := &S{pe: pe, self: pe.Self(), n: pe.PEs(), stdout: os.Stdout, stderr: os.Stderr}
	for 1<<s.log < s.n {
		s.log++
	}
	s.attachNet()
	s.rng = uint32(s.self + 1)
	s.nands0 = pe.Stats().NANDs
	s.q.init()
	s.clock.reset()
	if err := s.SetAsyncGlobalOR(true); err != nil {
		return nil, err
	}
	return s, nil
}

// Program adapts a Strata program to a papers one, for emulate.Run,
// spmd.Main or a loop over real ports: the PE is made a Strata PE (Init),
// fn runs, and a PE that returns without calling Exit exits with code 0
// when fn returned nil and with a non-zero code otherwise, so the others
// are never left waiting.
func Program(fn func(*S) error) func(*papers.PE) error {
	return func(pe *papers.PE) error {
		s, err := Init(pe)
		if err != nil {
			return err
		}
		err = fn(s)
		if s.done {
			return err
		}
		if err != nil {
			var ab *AbortError
			if !errors.As(err, &ab) {
				s.Exit(-1)
			}
			return err
		}
		return s.Exit(0)
	}
}

// SetOutput sets where Qprintf and EmptyPrintQ write (stdout) and where
// Fail and StrataLog write (stderr). Nil keeps the current writer.
func (s *S) SetOutput(stdout, stderr io.Writer) {
	if stdout != nil {
		s.stdout = stdout
	}
	if stderr != nil {
		s.stderr = stderr
	}
}

// Self is this PE's number (Strata's Self).
func (s *S) Self() int { return s.self }

// PartitionSize is the number of PEs (Strata's PartitionSize).
func (s *S) PartitionSize() int { return s.n }

// LogPartitionSize is log2 of PartitionSize rounded up (Strata's
// logPartitionSize; exact on the CM-5, whose partitions are powers of two).
func (s *S) LogPartitionSize() int { return s.log }

// PartitionMask is 2^LogPartitionSize - 1 (Strata's PartitionMask).
func (s *S) PartitionMask() int { return 1<<s.log - 1 }

// Leftmost reports Self == 0 (Strata's LEFTMOST).
func (s *S) Leftmost() bool { return s.self == 0 }

// Rightmost reports Self == PartitionSize-1 (Strata's RIGHTMOST).
func (s *S) Rightmost() bool { return s.self == s.n-1 }

// PE is the underlying papers PE, for operations Strata does not have. A
// program that uses it directly must leave no split-phase Strata operation
// pending and should call RestoreAsyncGlobalOR afterwards.
func (s *S) PE() *papers.PE { return s.pe }

// NANDs returns how many board NANDs this PE has taken part in since Init:
// Strata's own and those of the papers aggregate operations. Every PE takes
// part in every NAND, so this is also the program's count.
func (s *S) NANDs() uint64 { return s.nands + s.pe.Stats().NANDs - s.nands0 }

// Version is the manual's StrataVersion ("version number and date"), and
// VersionNumber its StrataVersionNumber: the Strata 2.0 Beta API of the
// manual of February 15, 1994, on TTL_PAPERS.
const (
	Version               = "Strata 2.0 Beta (manual of February 15, 1994) on TTL_PAPERS, Go"
	VersionNumber float32 = 2.0
)

// Logging is the manual's StrataLogging, "true iff linked with the
// debugging library". Here every build has the debugging library's logging
// (SetLogging, StrataLog), so it is true.
const Logging = true

// Errors.
var (
	// ErrExited is returned by every operation after Exit.
	ErrExited = errors.New("strata: this PE has exited")
)

// ExitError is what Exit returns for a non-zero code (and Fail and Assert
// through it): the PE function should return it.
type ExitError struct {
	PE   int
	Code int
	Msg  string // Fail's message, if any
	// Interrupt is why the interrupt that stops the other PEs was not
	// acknowledged by all of them, if it was not.
	Interrupt error
}

func (e *ExitError) Error() string {
	s := fmt.Sprintf("strata: PE %d exited with code %d", e.PE, e.Code)
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	if e.Interrupt != nil {
		s += " (stopping the others: " + e.Interrupt.Error() + ")"
	}
	return s
}

// AbortError is returned by the operation during which this PE learned,
// through the board's parallel interrupt, that another PE exited with a
// non-zero code (it names that PE: an exiting PE leaves the group, see
// papers.PE.Abort). Every later operation returns it too.
type AbortError struct {
	PE   int
	Op   string
	Code uint8 // the exit code as the interrupt carried it (4 bits)
	Err  *papers.InterruptError
}

func (e *AbortError) Error() string {
	who := "another PE"
	if e.Err != nil && e.Err.Left != 0 {
		who = e.Err.Left.String()
	}
	return fmt.Sprintf("strata: PE %d: %s: %s exited with code %#x", e.PE, e.Op, who, e.Code)
}

func (e *AbortError) Unwrap() error { return e.Err }

// ExitCode is the 4-bit code a non-zero exit code travels as on the
// interrupt lines: its low 4 bits, or 0xf when those are zero.
func ExitCode(code int) uint8 {
	if c := uint8(code) & 0xf; c != 0 {
		return c
	}
	return 0xf
}

// check is the test at the start of every operation: a PE that has exited
// or been aborted cannot continue, and a pending broadcast is finished
// first (Broadcast returns before its receivers have it).
func (s *S) check(op string) error {
	if s.done {
		return ErrExited
	}
	if s.err != nil {
		return s.err
	}
	if s.pend == pendBroadcast {
		if err := s.finishBroadcast(op); err != nil {
			return err
		}
	} else if s.pend != pendNone {
		return papers.Errorf("strata", s.self, "%s while a split-phase %s is in progress: complete it first", op, s.pend)
	}
	return nil
}

// fail records an error from the board. An interrupt means another PE has
// exited: every later operation fails the same way.
func (s *S) fail(op string, err error) error {
	var ie *papers.InterruptError
	if errors.As(err, &ie) {
		err = &AbortError{PE: s.self, Op: op, Code: ie.Code, Err: ie}
	} else {
		err = fmt.Errorf("strata: %s: %w", op, err) // papers' error names the PE
	}
	s.err = err
	return err
}

// Exit ends this PE's part in the program (StrataExit). With code 0 it
// waits in a barrier until every PE has exited and returns nil. With any
// other code it stops every PE at once: it raises the board's parallel
// interrupt carrying ExitCode(code), so every other PE's current or next
// operation returns an *AbortError, and it returns an *ExitError. Either
// way the port is left transparent. The PE function should return what
// Exit returns.
func (s *S) Exit(code int) error {
	return s.exit(code, "")
}

func (s *S) exit(code int, msg string) error {
	if s.done {
		return ErrExited
	}
	s.EmptyPrintQ()
	var err, ierr error
	if code == 0 {
		if err = s.check("Exit"); err == nil {
			if err = s.barrier(); err != nil {
				err = s.fail("Exit", err)
			}
		}
	} else if s.err == nil {
		if s.pend != pendNone {
			// Finish nothing: the others will be interrupted out of it too.
			s.pend = pendNone
		}
		// Abort returns once every PE has acknowledged, this PE leaving
		// the group, so that the others' AbortError names it; its error
		// (for example a PE that never reaches an operation) is secondary
		// to the exit itself.
		ierr = s.pe.Abort(ExitCode(code))
	}
	s.done = true
	cerr := s.pe.Close()
	if code != 0 {
		return &ExitError{PE: s.self, Code: code, Msg: msg, Interrupt: ierr}
	}
	if err == nil {
		err = cerr
	}
	return err
}

// Fail prints a message to stderr and exits with code -1, stopping every
// PE (StrataFail). It returns the *ExitError for the PE function to return.
func (s *S) Fail(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	fmt.Fprintf(s.stderr, "strata: PE %d: FAIL: %s\n", s.self, msg)
	return s.exit(-1, msg)
}

// Assert fails cleanly (through Fail, so every PE stops) when ok is false,
// naming what was asserted and where. It returns nil when ok is true.
func (s *S) Assert(ok bool, what string) error {
	if ok {
		return nil
	}
	_, file, line, _ := runtime.Caller(1)
	return s.Fail("assertion failed at %s:%d: %s", file, line, what)
}
