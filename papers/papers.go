// Package papers is the TTL_PAPERS driver: the seed's protocol
// (docs/protocol.md) over any lpt.Port, and the aggregate operations built on
// it.
//
// A PE opens its port with its id and the PE count, then runs the two
// primitives the board provides — a barrier (2 port operations) and, as its
// side effect, a 4-bit NAND of every PE's data lines (5 port operations) —
// and everything built from them: ANY, ALL, 4-bit OR and AND, vote, the
// aggregate operations of agg.go, and the parallel interrupt. Every blocking
// wait is bounded by Config.Timeout and Config.Context and ends in an error
// that says what happened, never a hang.
//
// Every PE knows which PEs take part (Participants): all of them after Open;
// a PE that leaves (Leave, Abort) or rejoins (Rejoin) announces it through
// the parallel interrupt, and every PE learns the new set from the vote that
// ends each interrupt acknowledge. Collectives combine the participants only,
// and fail naming the PE where a departed PE's value would be needed
// (docs/aggregates.md, "Participation").
//
// The protocol stands on package lpt alone: the same code runs on real
// printer ports (packages lpt and lpt/backend) and on the emulated board,
// whose in-process runs live in package emulate so that a program for real
// hardware does not link the emulator.
//
// A PE can also run on an Engine (OpenEngine): a substrate with collectives
// of its own, such as MPI (package mpi), where the same methods call the
// engine's barrier, reductions and gathers instead of building them from
// NANDs, with the same semantics (docs/mpi.md).
//
// # Errors
//
// Every error names its package and PE once ("papers: PE 3: ..."). Test for
// kinds with errors.Is and errors.As:
//
//   - *TimeoutError: a wait outlived Config.Timeout; errors.Is(err,
//     os.ErrDeadlineExceeded) holds and it has Timeout() true. After a
//     barrier it names the PEs not waiting with the others, as the
//     board's roll call or the data network found them.
//   - *InterruptError: the operation was cut short by a parallel interrupt
//     (another PE's Interrupt, Leave, Rejoin, Abort or Finish); it says who
//     left or joined, and who left because its program returned.
//   - *AbsentError (wraps ErrAbsent): a collective needed the value of a PE
//     that does not take part.
//   - ErrArgument: an argument no PE count can satisfy.
//   - ErrClosed, ErrLeft, ErrSplit: the PE is closed, has left, or has a
//     split-phase barrier pending.
//   - A wait abandoned because Config.Context is done wraps the context's
//     cause (context.Cause).
package papers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/peset"
)

// DefaultTimeout bounds each blocking wait when Config.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// MinCheckIn is the least check-in a Config without CheckInTimeout gets,
// however short its Timeout: a wait for operations on a busy machine can
// be tight, but processes started together by a launcher take their time
// to start, and each arrival holds the board for a moment (checkIn).
const MinCheckIn = 2 * time.Second

// NANDMode selects how a NAND keeps the data lines ahead of the ready line.
type NANDMode uint8

const (
	// Resample reads the status register once more after ready is seen
	// (the seed's choice: 5 port operations, always).
	Resample NANDMode = iota
	// DataFirst writes the new data before flipping the strobes; a PE whose
	// nybble does not change skips that write (4 or 5 port operations).
	DataFirst
)

// Config says who this PE is and how long it may wait.
type Config struct {
	PE  int // this PE's id, 0 <= PE < PEs
	PEs int // number of PEs in the program, 1 to lpt.MaxPEs
	// Timeout bounds every blocking wait (barrier, interrupt acknowledge).
	// Zero means DefaultTimeout.
	Timeout time.Duration
	// CheckInTimeout bounds Open's wait for the other PEs to start. Zero
	// means Timeout, but at least MinCheckIn. Where a person starts the
	// program on each PC by hand, give it a minute or more.
	CheckInTimeout time.Duration
	// Context, when set, abandons waits once it is done.
	Context  context.Context
	NANDMode NANDMode
	// NoLineTest leaves out check-in's test of the data lines, for a
	// program that tests them itself and says more (papersctl selftest).
	NoLineTest bool
	// FreshBoard says that no earlier program's PE can still be using the
	// board (package emulate's runs, on a board of their own): check-in
	// announces this PE's arrival at once instead of first giving such a
	// PE time to close (docs/protocol.md, "Check-in").
	FreshBoard bool
	// CensusEvery is how many calls of the collectives pass between two
	// censuses of the participants, which find a PE that went transparent
	// or was unplugged without announcing it (docs/protocol.md, "The
	// census"); gathers take one every time. Zero means
	// DefaultCensusEvery; negative turns the census off.
	CensusEvery int
	// Verify proves every collective's result on the board before it
	// returns it: a census of the participants and a test of every data
	// line (the proof Finish takes at the end of a run), so that a PE
	// lost or a line stuck mid-run is named at the call where it happened
	// instead of at the end (docs/protocol.md, "Proving the run"). It
	// costs ceil(n/4)+n+1 NANDs per call.
	Verify bool
	// Tag is compared at check-in beside the program's identity
	// (Program) and the PE count: PEs whose tags differ refuse to run
	// together, for a program whose PEs must also agree on, say, the
	// version of their input.
	Tag string
	// Rand draws the numbers check-in's test of an id started twice
	// broadcasts (two PCs with one id draw different ones). Nil: a random
	// source. A simulation that must repeat itself exactly, such as
	// package timing's trials, gives a seeded one.
	Rand rand.Source
}

// PE is one processing element's handle on the board. Its methods must be
// called from one goroutine, like the PE program they belong to.
type PE struct {
	port       lpt.Port
	self, n    int
	last       uint8 // the data byte last written (the seed's last_out); its LED bits are the program's colour
	timeout    time.Duration
	ctx        context.Context
	done       <-chan struct{}
	mode       NANDMode
	st         uint8 // the status byte that ended the last wait
	state      peState
	stats      Stats
	members    peset.Set // the participants, as every PE agreed at check-in and at the last interrupt
	change     change    // what the last interrupt acknowledge changed
	depart     bool      // the interrupt being acknowledged is this PE's own departure
	eng        Engine    // nil on a board; see OpenEngine
	sensed     bool      // on an engine: nand holds the NAND of the last split-phase barrier
	sensedNAND uint8

	datanet DataNet // the data network's endpoint, attached by the runner (datanet.go)

	noLineTest bool   // Config.NoLineTest
	fresh      bool   // Config.FreshBoard
	checking   bool   // in check-in, which says who is missing its own way
	tag        string // Config.Tag
	// In check-in once a vote has counted PEs: the bound on an
	// acknowledge's wait for every P_NAK (ackWait), and whether that
	// bound ran out.
	ackBound time.Duration
	ackHeld  bool
	// In check-in: this PE's identity, and what the last acknowledge's
	// compareIdentity found (identity.go).
	ident   peIdentity
	rand    rand.Source // Config.Rand; nil: the global source
	odd     bool        // the digests differ, or a line is stuck at 0: votes cover every id
	stuck   uint8       // the data lines probeInputs read stuck at 0 at the board
	misread *InputError // PEs whose status inputs probeInputs found stuck

	censusEvery int    // Config.CensusEvery, its default filled in
	calls       uint64 // calls of the collectives since Open, counted at their entry (begin)
	depth       int    // how many collectives the PE is inside (begin, end)
	outer       string // the name of the outermost one, for the census's errors

	verify    bool      // Config.Verify
	ops       uint64    // calls of the collectives since Open; never restarts, unlike calls
	proven    uint64    // the calls whose results the last census found every participant for (proof.go)
	linesOK   uint64    // the calls made when the data lines last passed their test (0: at check-in)
	serving   bool      // Finish waits for the others: keep answering the data network
	finishing bool      // the acknowledge is Finish's
	stayed    peset.Set // the participants that went on computing when Finish's acknowledge voted
}

type peState uint8

const (
	running peState = iota
	inBarrier
	left
	closed
)

// Stats counts the operations a PE has performed.
type Stats struct {
	Barriers   uint64 // barriers, including those inside NANDs
	NANDs      uint64 // 4-bit NAND operations
	Interrupts uint64 // interrupts acknowledged
	Censuses   uint64 // censuses taken (Config.CensusEvery); their NANDs are not counted above
}

// Open takes over port for PE cfg.PE of cfg.PEs, initialises it
// (docs/protocol.md, "Check-in") and checks in with the other PEs: it returns
// once every PE has opened its port, or an error naming the PEs that did not.
// The PE owns the port from then on; Close releases it.
func Open(port lpt.Port, cfg Config) (*PE, error) {
	p, err := newPE(cfg)
	if err != nil {
		return nil, err
	}
	p.port = port
	if err := port.Err(); err != nil {
		return nil, p.errorf("port: %w", err)
	}
	_, checkIn, _ := cfg.Timeouts()
	if err := p.checkIn(checkIn); err != nil {
		if p.ctx != nil && p.ctx.Err() != nil && p.leaveCheckIn() {
			p.port.Close()
			p.state = closed
		} else {
			p.abandon()
		}
		return nil, err
	}
	p.stats, p.calls = Stats{}, 0
	return p, nil
}

// Timeouts returns the bounds cfg sets, its defaults filled in: timeout
// bounds every wait, checkIn Open's wait for the other PEs to start.
func (cfg Config) Timeouts() (timeout, checkIn time.Duration, err error) {
	if cfg.Timeout < 0 || cfg.CheckInTimeout < 0 {
		return 0, 0, fmt.Errorf("papers: negative timeout (Timeout %v, CheckInTimeout %v): use 0 for the default or a positive duration", cfg.Timeout, cfg.CheckInTimeout)
	}
	timeout = cmp.Or(cfg.Timeout, DefaultTimeout)
	return timeout, cmp.Or(cfg.CheckInTimeout, max(timeout, MinCheckIn)), nil
}

// newPE checks cfg and returns the PE it describes, not yet opened.
func newPE(cfg Config) (*PE, error) {
	if cfg.PEs < 1 || cfg.PEs > lpt.MaxPEs {
		return nil, fmt.Errorf("papers: %d PEs: a TTL_PAPERS board connects 1 to %d", cfg.PEs, lpt.MaxPEs)
	}
	if cfg.PE < 0 || cfg.PE >= cfg.PEs {
		return nil, fmt.Errorf("papers: PE id %d out of range: with %d PEs the ids are 0 to %d", cfg.PE, cfg.PEs, cfg.PEs-1)
	}
	timeout, _, err := cfg.Timeouts()
	if err != nil {
		return nil, err
	}
	p := &PE{self: cfg.PE, n: cfg.PEs, timeout: timeout, ctx: cfg.Context, mode: cfg.NANDMode, noLineTest: cfg.NoLineTest, fresh: cfg.FreshBoard, tag: cfg.Tag, rand: cfg.Rand, censusEvery: cmp.Or(cfg.CensusEvery, DefaultCensusEvery), verify: cfg.Verify}
	if p.ctx != nil {
		p.done = p.ctx.Done()
	}
	return p, nil
}

// NamePE returns err prefixed with "PE k: " unless it already names PE k,
// as this package's errors and those of the layers on it do (an error in
// its chain with ErrorPE() == k: *PEError, *TimeoutError, …): a runner
// that reports several PEs' errors (package emulate, spmd.Main) names each
// PE once.
func NamePE(k int, err error) error {
	var named interface{ ErrorPE() int }
	if errors.As(err, &named) && named.ErrorPE() == k {
		return err
	}
	return fmt.Errorf("PE %d: %w", k, err)
}

// all is the mask of every PE of the program.
func (p *PE) all() peset.Set { return 1<<p.n - 1 }

// errorf formats an error of this PE: "papers: PE k: " and the message.
func (p *PE) errorf(format string, a ...any) error {
	if p.self < 0 { // Abandon: a port without its PE
		return fmt.Errorf("papers: "+format, a...)
	}
	return Errorf("papers", p.self, format, a...)
}

// abandon parks the port and releases it after a failed Open.
func (p *PE) abandon() {
	p.park()
	p.port.Close()
	p.state = closed
}

// park leaves the port as a PC whose program has not started: both strobes
// low (LED dark) hold every barrier until this PE opens again, so a PE
// still computing never goes on without it, and the data lines high, so
// that the others' roll call (rollCall) finds no one on its line; control 0 keeps P_RDY visible (P_SEL=0) and
// acknowledges interrupts forever (P_NAK=0), so it never blocks the others'
// interrupt acknowledge.
func (p *PE) park() {
	p.port.WriteData(lpt.DataMask)
	p.port.WriteControl(0)
}

// Self returns this PE's id.
func (p *PE) Self() int { return p.self }

// PEs returns the number of PEs in the program.
func (p *PE) PEs() int { return p.n }

// Participants returns the PEs that take part in the collectives (bit k:
// PE k): every PE after Open, less those that have left (Leave, Abort) and
// plus those that have rejoined, as every PE learned at the same point of
// the program — the vote that ends each interrupt acknowledge. A cable
// pulled mid-run is not announced: the census (Config.CensusEvery) finds
// it and drops it, with an error, and the Count forms of the reductions
// (ReduceCount …) count it out.
func (p *PE) Participants() peset.Set { return p.members }

// Stats returns the operation counts since Open.
func (p *PE) Stats() Stats { return p.stats }

// Port returns the port the PE drives, nil on an engine (OpenEngine).
func (p *PE) Port() lpt.Port { return p.port }

// Close parks the port (see park) and releases it. To let the others carry
// on without this PE instead, Leave first: a transparent port stays so.
func (p *PE) Close() error {
	if p.state == closed {
		return nil
	}
	if p.eng != nil {
		p.state = closed
		return p.eng.Close()
	}
	if p.state != left {
		p.park()
	}
	p.state = closed
	err := p.port.Err()
	if cerr := p.port.Close(); err == nil {
		err = cerr
	}
	return err
}

// usable is the check at every operation boundary.
func (p *PE) usable(op string) error {
	switch p.state {
	case closed:
		return p.errorf("%s: %w", op, ErrClosed)
	case left:
		return p.errorf("%s: %w", op, ErrLeft)
	case inBarrier:
		return p.errorf("%s: %w", op, ErrSplit)
	}
	if p.eng != nil {
		p.sensed = false
		return nil
	}
	if err := p.port.Err(); err != nil {
		return p.errorf("%s: port failed: %w", op, err)
	}
	return nil
}

// Barrier waits until every participating PE has reached a barrier: one
// write and, when no PE is late, one read.
func (p *PE) Barrier() (err error) {
	defer p.end(&err)
	if err := p.begin("barrier"); err != nil {
		return err
	}
	return p.barrier("barrier")
}

func (p *PE) barrier(op string) error {
	if err := p.usable(op); err != nil {
		return err
	}
	if p.eng != nil {
		return p.engineBarrier(op)
	}
	p.last ^= lpt.Strobes
	p.port.WriteData(p.last)
	return p.wait(op)
}

func (p *PE) engineBarrier(op string) error {
	if err := p.eng.Barrier(op); err != nil {
		return p.fromEngine(err)
	}
	p.stats.Barriers++
	return nil
}

// StartBarrier signals arrival at a barrier and returns at once (Strata's
// StartBarrier); the PE may compute until it calls QueryBarrier or
// CompleteBarrier. Other operations return ErrSplit until the barrier has
// completed.
func (p *PE) StartBarrier() error {
	if err := p.usable("StartBarrier"); err != nil {
		return err
	}
	if p.eng != nil {
		if err := p.eng.StartBarrier("StartBarrier", p.last&lpt.DataMask); err != nil {
			return p.fromEngine(err)
		}
		p.state = inBarrier
		return nil
	}
	p.last ^= lpt.Strobes
	p.port.WriteData(p.last)
	p.state = inBarrier
	return nil
}

// QueryBarrier reports, without blocking, whether the last barrier has
// completed (Strata's QueryBarrier): while a barrier begun by StartBarrier
// is pending it reads the board once; once that barrier has completed it is
// true, and stays true until the next StartBarrier. With no split-phase
// barrier begun, the last barrier has completed: true.
func (p *PE) QueryBarrier() (bool, error) {
	if p.state != inBarrier {
		return true, p.usable("QueryBarrier")
	}
	if p.eng != nil {
		return p.pollEngine("QueryBarrier", false)
	}
	if p.ready(p.port.ReadStatus()) {
		p.state = running
		p.stats.Barriers++
		return true, nil
	}
	if err := p.port.Err(); err != nil {
		return false, p.errorf("QueryBarrier: port failed: %w", err)
	}
	return false, nil
}

// CheckBarrierInterrupt is for a PE that waits for a split-phase barrier
// by polling QueryBarrier between other work (am.Barrier answers the data
// network meanwhile): it looks for a parallel interrupt, as a blocking
// barrier's wait does every 50 µs, and acknowledges one that is pending,
// which ends the barrier with the *InterruptError — how such a PE learns
// that another returned (Finish) or failed. It returns nil when no
// interrupt or no barrier is pending.
func (p *PE) CheckBarrierInterrupt() error {
	if p.state != inBarrier || p.eng != nil {
		return nil
	}
	p.state = running
	done, err := p.interrupted("barrier")
	switch {
	case !done:
		p.state = inBarrier
	case err == nil: // it completed meanwhile
		p.stats.Barriers++
	}
	return err
}

// CompleteBarrier returns once the last barrier has completed (Strata's
// CompleteBarrier): it waits for a barrier begun by StartBarrier, and
// returns at once when that barrier has completed already — whether or not
// QueryBarrier saw it — or when none was begun.
func (p *PE) CompleteBarrier() error {
	if p.state != inBarrier {
		return p.usable("CompleteBarrier")
	}
	if p.eng != nil {
		_, err := p.pollEngine("CompleteBarrier", true)
		return err
	}
	p.state = running
	return p.wait("barrier")
}

// pollEngine polls a split-phase barrier on an engine; once it is done,
// SenseNAND returns the NAND it carried.
func (p *PE) pollEngine(op string, block bool) (bool, error) {
	done, nand, err := p.eng.PollBarrier(op, block)
	if err != nil {
		p.state = running
		return false, p.fromEngine(err)
	}
	if done {
		p.state = running
		p.stats.Barriers++
		p.sensed, p.sensedNAND = true, nand
	}
	return done, nil
}

// ready reports whether a status byte shows the barrier just signalled as
// complete: status 0x80 reads 1 when every PE is at S0, 0 when at S1.
func (p *PE) ready(status uint8) bool {
	return (status&lpt.RDY != 0) == (p.last&lpt.S0 != 0)
}

// wait polls for the barrier to complete. The first two polls are the fast
// path; after two failed polls the LED turns red until the barrier
// completes (so the LED costs port operations only when the PE waits), then
// shows the program's colour (SetLED) again.
func (p *PE) wait(op string) error {
	for i := 0; i < 2; i++ {
		if p.st = p.port.ReadStatus(); p.ready(p.st) {
			p.stats.Barriers++
			return nil
		}
	}
	p.port.WriteData(p.waitingLED())
	err := p.slowWait(op, false)
	p.port.WriteData(p.last)
	if err == nil {
		p.stats.Barriers++
	}
	return err
}

// checkIntEvery paces interrupt checks while waiting: each costs two control
// writes, so they are spaced in time (about 40 polls on a 1995 port, many
// more on the emulator), not counted in polls.
const checkIntEvery = 50 * time.Microsecond

// spinPolls is how many polls a wait makes before it blocks on a port that
// can (lpt.Waiter): long enough for a partner on another CPU to arrive,
// short enough to give the CPU away soon when PEs outnumber CPUs.
const spinPolls = 2

// slowWait polls the status register until the barrier completes (or, with
// ack, until the interrupt flag clears). On a port that can block
// (lpt.Waiter) it blocks after spinPolls polls until the board may have
// changed; otherwise it spins, then yields, then sleeps. Every 64 polls, and
// after every block, it checks the port's sticky error, the context and the
// deadline; every checkIntEvery, and whenever a block ends early, it checks
// for an interrupt (CHECKINT).
func (p *PE) slowWait(op string, ack bool) error {
	var start time.Time      // read when the wait first checks the time: most waits end sooner
	nextInt := checkIntEvery // a short wait is not worth an interrupt check
	w, _ := p.port.(lpt.Waiter)
	woke, blocked := false, false
	// A wait after check-in asks the data network, if the PE has one,
	// every deadEvery whether a PE it waits for died: an interrupt's
	// acknowledge too, since a PE that fails raises one as soon as it
	// finds the dead PE, and the others wait for the dead PE's
	// acknowledge then.
	asks, nextDead := p.datanet != nil && !p.checking, deadEvery
	for polls := 1; ; polls++ {
		if p.settled(ack) {
			return nil
		}
		blocking := w != nil && polls >= spinPolls
		if polls&63 != 0 && !blocking {
			if w == nil && polls > 256 {
				runtime.Gosched()
			}
			continue
		}
		// The first block reads no clock (a Waiter blocks a few
		// milliseconds at most, and most waits end with it): when PEs
		// outnumber CPUs, reading it costs a good part of a barrier.
		var waited time.Duration
		if !start.IsZero() {
			waited = time.Since(start)
		} else if !blocking || blocked {
			start = time.Now()
		}
		if w == nil && waited > 2*time.Millisecond {
			time.Sleep(20 * time.Microsecond)
		}
		if p.serving {
			p.datanet.Listen()
		}
		if !ack && (waited >= nextInt || woke) {
			nextInt = waited + checkIntEvery
			if done, err := p.interrupted(op); done {
				return err
			}
		}
		if err := p.waitOver(op, ack, waited); err != nil {
			return err
		}
		if asks && waited >= nextDead {
			nextDead = waited + deadEvery
			if err := p.diedOnDataNet(op, ack, waited); err != nil {
				return err
			}
		}
		if blocking {
			d := p.timeout - waited
			if p.serving {
				d = min(d, serveNap)
			} else if asks {
				d = min(d, deadEvery)
			}
			woke, blocked = w.Wait(p.st, lpt.RDY, d, p.done), true
		}
	}
}

// deadEvery paces a wait's question to the data network
// (DataNet.Dead): a PE the network saw die is named within about this
// long, not after the timeout and a roll call. A wait that has a data
// network blocks on the port at most this long at a time, so that it
// asks; the question costs a system call or two per PE, 100 times a
// second of a wait that is already slow.
const deadEvery = 10 * time.Millisecond

// diedOnDataNet ends a wait that cannot complete because a participant
// it waits with died, as the data network knows: a killed PE's
// connections end the moment it dies. Its error is the roll call's kind,
// a *TimeoutError naming the dead PEs with the data network's account of
// them, Dead set.
func (p *PE) diedOnDataNet(op string, ack bool, waited time.Duration) error {
	dead := p.datanet.Dead(p.members &^ (1 << p.self))
	if dead == 0 || p.settled(ack) {
		return nil
	}
	// Every PE asked is known gone: Ask pings none, Absent gives the
	// network's account of each.
	p.datanet.Ask(dead)
	return &TimeoutError{PE: p.self, Op: op, Waited: waited, Missing: dead, DataNet: p.datanet.Absent(), Dead: true}
}

// interrupted checks for an interrupt during a wait and acknowledges it:
// done reports that the wait is over, with err nil if the barrier completed
// meanwhile, else the *InterruptError (or the acknowledge's failure).
func (p *PE) interrupted(op string) (done bool, err error) {
	if !p.interruptPending() {
		return false, nil
	}
	// A barrier that completed is not reported as interrupted: the raiser
	// stalls every barrier, so the next wait acknowledges.
	p.port.WriteControl(lpt.NAK)
	if p.settled(false) {
		return true, nil
	}
	code, err := p.acknowledge(false, 0)
	if err != nil {
		return true, err
	}
	return true, p.interruptError(op, code)
}

// waitOver returns the error that ends a wait: the port's sticky error, the
// context's end, or the deadline.
func (p *PE) waitOver(op string, ack bool, waited time.Duration) error {
	if err := p.port.Err(); err != nil {
		return Errorf("papers", p.self, "%s: port failed: %w", op, err)
	}
	select {
	case <-p.done:
		if p.settled(ack) {
			return nil
		}
		return Errorf("papers", p.self, "%s abandoned: %w", op, context.Cause(p.ctx))
	default:
	}
	if waited > p.timeout && !p.settled(ack) {
		e := &TimeoutError{PE: p.self, Op: op, Waited: p.timeout}
		if x, ok := p.port.(lpt.StallExplainer); ok {
			e.Stall = x.ExplainStall()
		}
		if !ack && !p.checking {
			e.Missing, e.DataNet = named(p.rollCall())
			e.RollCall = true
		}
		return e
	}
	return nil
}

// settled polls the status once: true when the wait is over. A wait reads
// it once more before giving up, since the checks after the last poll take
// time and a wait that completed meanwhile (for example because the PE it
// waited for finished and then cancelled the context) must not be reported
// as abandoned or timed out.
func (p *PE) settled(ack bool) bool {
	p.st = p.port.ReadStatus()
	return ack && p.st&lpt.INT == 0 || !ack && p.ready(p.st)
}

// NAND contributes x (4 bits) and returns the NAND of every participating
// PE's contribution. It is a barrier whose side effect is the NAND, plus a
// resample of the data lines and a second barrier so that no PE changes its
// data before all have read: 5 port operations when nobody is late. A PE
// that does not take part (it left, or its cable is unplugged) drives all
// ones, the NAND's identity: the result is the NAND of the participants.
func (p *PE) NAND(x uint8) (_ uint8, err error) {
	defer p.end(&err)
	if err := p.begin("NAND"); err != nil {
		return 0, err
	}
	return p.nand("NAND", x)
}

func (p *PE) nand(op string, x uint8) (uint8, error) {
	if x > lpt.DataMask {
		return 0, p.errorf("%s: contribution %#x is wider than 4 bits: the board has 4 data lines (use 0 to 0xf)", op, x)
	}
	if err := p.usable(op); err != nil {
		return 0, err
	}
	if p.eng != nil {
		r, err := p.eng.Allreduce(op, BitAnd, 8, uint64(x))
		if err != nil {
			return 0, p.fromEngine(err)
		}
		p.stats.NANDs++
		return ^uint8(r) & lpt.DataMask, nil
	}
	var s uint8
	if p.mode == DataFirst {
		if p.last&lpt.DataMask != x {
			p.last = p.last&^lpt.DataMask | x
			p.port.WriteData(p.last)
		}
		p.last ^= lpt.Strobes
		p.port.WriteData(p.last)
		if err := p.wait(op); err != nil {
			return 0, err
		}
		s = p.st
	} else {
		p.last = (p.last^lpt.Strobes)&^lpt.DataMask | x
		p.port.WriteData(p.last)
		if err := p.wait(op); err != nil {
			return 0, err
		}
		s = p.port.ReadStatus()
	}
	p.stats.NANDs++
	if err := p.barrier(op); err != nil {
		return 0, err
	}
	return s >> lpt.InputShift & lpt.DataMask, nil
}

// OR4 returns the bitwise OR of every PE's 4-bit x (one NAND of the
// complements).
func (p *PE) OR4(x uint8) (_ uint8, err error) {
	defer p.end(&err)
	if err := p.begin("OR4"); err != nil {
		return 0, err
	}
	if x > lpt.DataMask {
		return 0, p.errorf("OR4: value %#x is wider than 4 bits (use 0 to 0xf)", x)
	}
	return p.NAND(^x & lpt.DataMask)
}

// AND4 returns the bitwise AND of every PE's 4-bit x.
func (p *PE) AND4(x uint8) (_ uint8, err error) {
	defer p.end(&err)
	if err := p.begin("AND4"); err != nil {
		return 0, err
	}
	r, err := p.NAND(x)
	return ^r & lpt.DataMask, err
}

// Any reports whether b is true on any PE.
func (p *PE) Any(b bool) (_ bool, err error) {
	defer p.end(&err)
	if err := p.begin("Any"); err != nil {
		return false, err
	}
	var x uint8
	if b {
		x = lpt.DataMask
	}
	r, err := p.OR4(x)
	return r != 0, err
}

// All reports whether b is true on every participating PE.
func (p *PE) All(b bool) (_ bool, err error) {
	defer p.end(&err)
	if err := p.begin("All"); err != nil {
		return false, err
	}
	var x uint8
	if b {
		x = lpt.DataMask
	}
	r, err := p.AND4(x)
	return r == lpt.DataMask, err
}

// Vote is the 1-bit multi-broadcast: every PE gets a mask with bit i set
// when PE i voted true. PE i drives line i%4 in NAND number i/4, so n PEs
// take ceil(n/4) NANDs. A PE that does not take part reads as false.
func (p *PE) Vote(b bool) (_ peset.Set, err error) {
	defer p.end(&err)
	if err := p.begin("vote"); err != nil {
		return 0, err
	}
	return p.vote("vote", b)
}

func (p *PE) vote(op string, b bool) (peset.Set, error) {
	if p.eng != nil {
		var x uint64
		if b {
			x = 1 << p.self
		}
		if err := p.usable(op); err != nil {
			return 0, err
		}
		r, err := p.eng.Allreduce(op, BitOr, 64, x)
		return peset.Set(r) & p.all(), p.fromEngine(err)
	}
	// In check-in, once the PEs found their identities differ, every PE
	// votes for every id the board can have: PEs started for other PE
	// counts take as many NANDs, and count in the mask, so that check-in
	// can name them (agree).
	n := p.n
	if p.checking && p.odd {
		n = lpt.MaxPEs
	}
	var mask peset.Set
	for round := 0; round*4 < n; round++ {
		x := uint8(lpt.DataMask)
		if b && p.self/4 == round {
			x &^= 1 << (p.self % 4)
		}
		r, err := p.nand(op, x)
		if err != nil {
			return 0, err
		}
		mask |= peset.Set(r) << (4 * round)
	}
	if p.checking {
		return mask, nil
	}
	return mask & p.all(), nil
}
