// Package papers is the TTL_PAPERS driver: the seed's protocol (SPEC §5) over
// any lpt.Port, and the aggregate operations built on it.
//
// A PE opens its port with its id and the PE count, then runs the two
// primitives the board provides — a barrier (2 port operations) and, as its
// side effect, a 4-bit NAND of every PE's data lines (5 port operations) —
// and everything built from them: ANY, ALL, 4-bit OR and AND, vote, and the
// parallel interrupt. Every blocking wait is bounded by Config.Timeout and
// Config.Context and ends in an error that says what happened, never a hang.
//
// The protocol stands on package lpt alone: the same code runs on real
// printer ports (packages lpt and lpt/backend) and on the emulated board,
// whose in-process runs live in package emulate so that a program for real
// hardware does not link the emulator.
package papers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/ttlpapers/ttlpapers/lpt"
)

// DefaultTimeout bounds each blocking wait when Config.Timeout is zero.
const DefaultTimeout = 10 * time.Second

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
	PEs int // number of PEs in the program, 1 to 32
	// Timeout bounds every blocking wait (barrier, interrupt acknowledge).
	// Zero means DefaultTimeout.
	Timeout time.Duration
	// CheckInTimeout bounds Open's wait for the other PEs to start. Zero
	// means Timeout. Where a person starts the program on each PC by hand,
	// give it a minute or more.
	CheckInTimeout time.Duration
	// Context, when set, abandons waits once it is done.
	Context  context.Context
	NANDMode NANDMode
}

// PE is one processing element's handle on the board. Its methods must be
// called from one goroutine, like the PE program they belong to.
type PE struct {
	port    lpt.Port
	self, n int
	last    uint8 // the data byte last written (the seed's last_out)
	timeout time.Duration
	ctx     context.Context
	done    <-chan struct{}
	mode    NANDMode
	st      uint8 // the status byte that ended the last wait
	state   peState
	stats   Stats
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
}

// Errors.
var (
	ErrClosed = errors.New("papers: PE is closed: open the port again to continue")
	ErrLeft   = errors.New("papers: PE has left the barrier group (Leave): call Rejoin first")
	ErrSplit  = errors.New("papers: a split-phase barrier is in progress: call CompleteBarrier first")
)

// TimeoutError reports a wait that did not complete within its deadline.
type TimeoutError struct {
	PE     int
	Op     string
	Waited time.Duration
	// Stall says who held the operation up, when the backend knows (the
	// emulator does; real hardware does not).
	Stall string
}

func (e *TimeoutError) Error() string {
	s := fmt.Sprintf("papers: PE %d: %s did not complete within %v", e.PE, e.Op, e.Waited)
	if e.Stall != "" {
		s += ": " + e.Stall
	} else {
		s += ": another PE has not arrived (not started, crashed, unplugged, or computing longer than the timeout; raise the timeout if so)"
	}
	return s
}

// InterruptError is returned by the operation during which a parallel
// interrupt was acknowledged. The board is back in step afterwards: every PE
// got the same error from its own operation and the next operation of every
// PE pairs with the others' next.
type InterruptError struct {
	PE   int
	Op   string
	Code uint8 // the 4-bit code (the OR of the codes, if several PEs raised)
}

func (e *InterruptError) Error() string {
	return fmt.Sprintf("papers: PE %d: %s interrupted by a parallel interrupt with code %#x", e.PE, e.Op, e.Code)
}

// Open takes over port for PE cfg.PE of cfg.PEs, initialises it (SPEC §5)
// and checks in with the other PEs: it returns once every PE has opened its
// port, or an error naming the PEs that did not. The PE owns the port from
// then on; Close releases it.
func Open(port lpt.Port, cfg Config) (*PE, error) {
	if cfg.PEs < 1 || cfg.PEs > lpt.MaxPEs {
		return nil, fmt.Errorf("papers: %d PEs: a TTL_PAPERS board connects 1 to %d", cfg.PEs, lpt.MaxPEs)
	}
	if cfg.PE < 0 || cfg.PE >= cfg.PEs {
		return nil, fmt.Errorf("papers: PE id %d out of range: with %d PEs the ids are 0 to %d", cfg.PE, cfg.PEs, cfg.PEs-1)
	}
	if cfg.Timeout < 0 || cfg.CheckInTimeout < 0 {
		return nil, fmt.Errorf("papers: negative timeout (Timeout %v, CheckInTimeout %v)", cfg.Timeout, cfg.CheckInTimeout)
	}
	p := &PE{port: port, self: cfg.PE, n: cfg.PEs, timeout: cmp.Or(cfg.Timeout, DefaultTimeout), ctx: cfg.Context, mode: cfg.NANDMode}
	if p.ctx != nil {
		p.done = p.ctx.Done()
	}
	if err := port.Err(); err != nil {
		return nil, fmt.Errorf("papers: PE %d: port: %w", p.self, err)
	}
	// P_SEL=0 so Busy shows P_RDY; P_NAK=1 so we do not acknowledge
	// interrupts; exactly one strobe set; data neutral; LED green.
	port.WriteControl(lpt.NAK)
	p.last = lpt.S1 | lpt.LG | lpt.DataMask
	port.WriteData(p.last)
	// Check in. First wait for the S1 phase: the flip-flop powers up in
	// either state, and only reads "S1 done" for certain once every PE has
	// written S1. A PE whose program has not started holds its port's
	// power-on 0x00 — both strobes low — which stalls both trees until it
	// arrives. Then one full barrier, and a vote to catch PEs that are
	// unplugged or transparent (they never hold a barrier up).
	timeout := p.timeout
	p.timeout = cmp.Or(cfg.CheckInTimeout, timeout)
	defer func() { p.timeout = timeout }()
	if err := p.wait("check-in"); err != nil {
		p.abandon()
		return nil, fmt.Errorf("papers: PE %d: check-in: %w", p.self, err)
	}
	if err := p.Barrier(); err != nil {
		p.abandon()
		return nil, fmt.Errorf("papers: PE %d: check-in: %w", p.self, err)
	}
	mask, err := p.Vote(true)
	if err != nil {
		p.abandon()
		return nil, fmt.Errorf("papers: PE %d: check-in: %w", p.self, err)
	}
	if all := uint64(1)<<p.n - 1; mask != all {
		p.abandon()
		return nil, fmt.Errorf("papers: PE %d: check-in: PEs %v did not answer (cable unplugged, port transparent, or their program was started with a different PE count)", p.self, Members(all&^mask))
	}
	p.stats = Stats{}
	return p, nil
}

// Members lists the PEs whose bits are set in a vote mask, in PE order.
func Members(mask uint64) []int {
	var pes []int
	for i := 0; mask != 0; i, mask = i+1, mask>>1 {
		if mask&1 != 0 {
			pes = append(pes, i)
		}
	}
	return pes
}

// abandon parks the port and releases it after a failed Open.
func (p *PE) abandon() {
	p.park()
	p.port.Close()
	p.state = closed
}

// park leaves the port as a PC whose program has not started: data 0 (both
// strobes low, LED dark) holds every barrier until this PE opens again, so
// the next program's check-in waits for it and a PE still computing never
// goes on without it; control 0 keeps P_RDY visible (P_SEL=0) and
// acknowledges interrupts forever (P_NAK=0), so it never blocks the others'
// interrupt acknowledge.
func (p *PE) park() {
	p.port.WriteData(0)
	p.port.WriteControl(0)
}

// Self returns this PE's id.
func (p *PE) Self() int { return p.self }

// PEs returns the number of PEs.
func (p *PE) PEs() int { return p.n }

// Stats returns the operation counts since Open.
func (p *PE) Stats() Stats { return p.stats }

// Port returns the port the PE drives.
func (p *PE) Port() lpt.Port { return p.port }

// Close parks the port (see park) and releases it. To let the others carry
// on without this PE instead, Leave first: a transparent port stays so.
func (p *PE) Close() error {
	if p.state == closed {
		return nil
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
func (p *PE) usable() error {
	switch p.state {
	case closed:
		return ErrClosed
	case left:
		return ErrLeft
	case inBarrier:
		return ErrSplit
	}
	if err := p.port.Err(); err != nil {
		return fmt.Errorf("papers: PE %d: port failed: %w", p.self, err)
	}
	return nil
}

// Barrier waits until every participating PE has reached a barrier: one
// write and, when no PE is late, one read.
func (p *PE) Barrier() error {
	if err := p.usable(); err != nil {
		return err
	}
	p.last ^= lpt.Strobes
	p.port.WriteData(p.last)
	return p.wait("barrier")
}

// StartBarrier signals arrival at a barrier and returns at once; the PE may
// compute until it calls QueryBarrier or CompleteBarrier.
func (p *PE) StartBarrier() error {
	if err := p.usable(); err != nil {
		return err
	}
	p.last ^= lpt.Strobes
	p.port.WriteData(p.last)
	p.state = inBarrier
	return nil
}

// QueryBarrier polls once, without blocking: true when the barrier started
// by StartBarrier has completed (the barrier is then finished).
func (p *PE) QueryBarrier() (bool, error) {
	if p.state != inBarrier {
		return false, errors.New("papers: QueryBarrier without StartBarrier")
	}
	if p.ready(p.port.ReadStatus()) {
		p.state = running
		p.stats.Barriers++
		return true, nil
	}
	return false, p.port.Err()
}

// CompleteBarrier waits for the barrier started by StartBarrier.
func (p *PE) CompleteBarrier() error {
	if p.state != inBarrier {
		return errors.New("papers: CompleteBarrier without StartBarrier")
	}
	p.state = running
	return p.wait("barrier")
}

// ready reports whether a status byte shows the barrier just signalled as
// complete: status 0x80 reads 1 when every PE is at S0, 0 when at S1.
func (p *PE) ready(status uint8) bool {
	return (status&lpt.RDY != 0) == (p.last&lpt.S0 != 0)
}

// wait polls for the barrier to complete. The first two polls are the fast
// path; after two failed polls the LED turns red until the barrier
// completes (so the LED costs port operations only when the PE waits).
func (p *PE) wait(op string) error {
	for i := 0; i < 2; i++ {
		if p.st = p.port.ReadStatus(); p.ready(p.st) {
			p.stats.Barriers++
			return nil
		}
	}
	p.port.WriteData(p.last ^ (lpt.LG | lpt.LR))
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
	woke := false
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
		if start.IsZero() {
			start = time.Now()
		}
		waited := time.Since(start)
		if w == nil && waited > 2*time.Millisecond {
			time.Sleep(20 * time.Microsecond)
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
		if blocking {
			woke = w.Wait(p.st, lpt.RDY, p.timeout-waited, p.done)
		}
	}
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
	return true, &InterruptError{PE: p.self, Op: op, Code: code}
}

// waitOver returns the error that ends a wait: the port's sticky error, the
// context's end, or the deadline.
func (p *PE) waitOver(op string, ack bool, waited time.Duration) error {
	if err := p.port.Err(); err != nil {
		return fmt.Errorf("papers: PE %d: %s: port failed: %w", p.self, op, err)
	}
	select {
	case <-p.done:
		if p.settled(ack) {
			return nil
		}
		return fmt.Errorf("papers: PE %d: %s abandoned: %w", p.self, op, context.Cause(p.ctx))
	default:
	}
	if waited > p.timeout && !p.settled(ack) {
		e := &TimeoutError{PE: p.self, Op: op, Waited: p.timeout}
		if x, ok := p.port.(lpt.StallExplainer); ok {
			e.Stall = x.ExplainStall()
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
// data before all have read: 5 port operations when nobody is late.
func (p *PE) NAND(x uint8) (uint8, error) {
	if x > lpt.DataMask {
		return 0, fmt.Errorf("papers: PE %d: NAND contribution %#x is wider than 4 bits: the board has 4 data lines (use 0 to 0xf)", p.self, x)
	}
	if err := p.usable(); err != nil {
		return 0, err
	}
	var s uint8
	if p.mode == DataFirst {
		if p.last&lpt.DataMask != x {
			p.last = p.last&^lpt.DataMask | x
			p.port.WriteData(p.last)
		}
		p.last ^= lpt.Strobes
		p.port.WriteData(p.last)
		if err := p.wait("NAND"); err != nil {
			return 0, err
		}
		s = p.st
	} else {
		p.last = (p.last^lpt.Strobes)&^lpt.DataMask | x
		p.port.WriteData(p.last)
		if err := p.wait("NAND"); err != nil {
			return 0, err
		}
		s = p.port.ReadStatus()
	}
	p.stats.NANDs++
	if err := p.Barrier(); err != nil {
		return 0, err
	}
	return s >> lpt.InputShift & lpt.DataMask, nil
}

// OR4 returns the bitwise OR of every PE's 4-bit x (one NAND of the
// complements).
func (p *PE) OR4(x uint8) (uint8, error) {
	if x > lpt.DataMask {
		return 0, fmt.Errorf("papers: PE %d: OR4 value %#x is wider than 4 bits", p.self, x)
	}
	return p.NAND(^x & lpt.DataMask)
}

// AND4 returns the bitwise AND of every PE's 4-bit x.
func (p *PE) AND4(x uint8) (uint8, error) {
	r, err := p.NAND(x)
	return ^r & lpt.DataMask, err
}

// Any reports whether b is true on any PE.
func (p *PE) Any(b bool) (bool, error) {
	var x uint8
	if b {
		x = lpt.DataMask
	}
	r, err := p.OR4(x)
	return r != 0, err
}

// All reports whether b is true on every PE.
func (p *PE) All(b bool) (bool, error) {
	var x uint8
	if b {
		x = lpt.DataMask
	}
	r, err := p.AND4(x)
	return r == lpt.DataMask, err
}

// Vote is the 1-bit multi-broadcast: every PE gets a mask with bit i set
// when PE i voted true. PE i drives line i%4 in NAND number i/4, so n PEs
// take ceil(n/4) NANDs.
func (p *PE) Vote(b bool) (uint64, error) {
	var mask uint64
	for round := 0; round*4 < p.n; round++ {
		x := uint8(lpt.DataMask)
		if b && p.self/4 == round {
			x &^= 1 << (p.self % 4)
		}
		r, err := p.NAND(x)
		if err != nil {
			return 0, err
		}
		mask |= uint64(r) << (4 * round)
	}
	return mask & (1<<p.n - 1), nil
}
