package timed

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/ttlpapers/ttlpapers/lpt"
)

// PortTiming is how fast a PC drives its printer port: each port operation
// takes Op, give or take Jitter (a fraction of Op), and with probability
// StallProb an interrupt or the scheduler holds the program up for StallMin
// to StallMax before it (the seed: "it isn't practical to disable
// interrupts under UNIX").
type PortTiming struct {
	Name               string
	Op                 time.Duration
	Jitter             float64
	StallProb          float64
	StallMin, StallMax time.Duration
}

// Port timings of the PCs of three eras.
var (
	// ISA is the seed's PC: a 486DX33 with an ISA printer port. docs/protocol.md
	// derives 1.26 µs per operation from the seed's measurements (a
	// barrier, 2 operations, in 2.5 µs; a NAND, 5, in 6.3 µs); an
	// interrupt handler on it takes microseconds.
	ISA = PortTiming{Name: "isa", Op: 1260 * time.Nanosecond, Jitter: 0.1, StallProb: 0.01, StallMin: 2 * time.Microsecond, StallMax: 20 * time.Microsecond}
	// PCI is a PCI card or a chipset's port on the LPC bus: an I/O cycle
	// of about 0.5 to 1 µs ("any outb() operation takes ~1us", wine-devel,
	// 2005); we take the fast end.
	PCI = PortTiming{Name: "pci", Op: 500 * time.Nanosecond, Jitter: 0.1, StallProb: 0.01, StallMin: time.Microsecond, StallMax: 10 * time.Microsecond}
	// PCIe is a PCIe parallel card at the fast end of what they do,
	// 0.2 µs per operation: writes are posted, reads a round trip through
	// the root complex (usually slower, which only widens the margins).
	PCIe = PortTiming{Name: "pcie", Op: 200 * time.Nanosecond, Jitter: 0.1, StallProb: 0.01, StallMin: time.Microsecond, StallMax: 4 * time.Microsecond}
)

// PortTimings lists the built-in port timings.
var PortTimings = []PortTiming{ISA, PCI, PCIe}

// PortTimingByName returns the built-in port timing with the given name.
func PortTimingByName(name string) (PortTiming, error) {
	var names []string
	for _, t := range PortTimings {
		if strings.EqualFold(t.Name, name) {
			return t, nil
		}
		names = append(names, t.Name)
	}
	return PortTiming{}, fmt.Errorf("timed: no port timing %q: use %s", name, strings.Join(names, ", "))
}

// Validate reports what is wrong with t.
func (t PortTiming) Validate() error {
	switch {
	case t.Op <= 0:
		return fmt.Errorf("timed: port timing %q: an operation must take some time (Op %v)", t.Name, t.Op)
	case !(t.Jitter >= 0 && t.Jitter < 1):
		return fmt.Errorf("timed: port timing %q: jitter %v must be at least 0 and below 1", t.Name, t.Jitter)
	case !(t.StallProb >= 0 && t.StallProb <= 1):
		return fmt.Errorf("timed: port timing %q: stall probability %v must be from 0 to 1", t.Name, t.StallProb)
	case t.StallMin < 0 || t.StallMax < t.StallMin:
		return fmt.Errorf("timed: port timing %q: stalls from %v to %v: want 0 <= min <= max", t.Name, t.StallMin, t.StallMax)
	}
	return nil
}

// RunConfig says how the PEs of a timed board run.
type RunConfig struct {
	// PEs is the number of ports, PEs 0 to PEs-1; zero means every plugged
	// cable.
	PEs    int
	Timing PortTiming
	// Speed multiplies each PE's operation time (1.2: 20 % slower);
	// missing entries are 1.
	Speed []float64
	// Start is when each PE makes its first operation, after the board's
	// present time; missing entries are 0.
	Start []time.Duration
	// Seed seeds the jitter and the stalls.
	Seed uint64
	// Limit is how much simulated time the run may take; after it every
	// port's Err fails. Zero means 100 ms.
	Limit time.Duration
}

// Port is one PE's printer port on a timed board. Its operations run
// in simulated-time order across all PEs: each one waits until every PE
// still running has one pending, then the earliest runs (ties in PE
// order), against the board as it is at that instant. A run is therefore
// the same for the same seeds, however the goroutines are scheduled. PE
// programs must meet only through their ports: a PE that waits for another
// by other means stops the clock. Its methods are meant to be called from
// one goroutine (the PE).
type Port struct {
	c    *cosim
	pe   int
	t    time.Duration // this PE's clock: when its last operation ran
	op   time.Duration
	rng  *rand.Rand
	wake chan uint8
	// Set under c.mu.
	pending bool
	kind    uint8
	val     uint8
	ops     uint64
	closed  bool
	err     error
}

var _ lpt.Port = (*Port)(nil)

// cosim is the scheduler of one run.
type cosim struct {
	mu    sync.Mutex
	b     *Board
	t     PortTiming
	ports []*Port
	live  int // ports not closed
	ready int // ports with an operation pending
	limit time.Duration
}

// Operation kinds.
const (
	opWriteData = iota
	opWriteControl
	opReadStatus
	opReadData
	opReadControl
)

// Ports returns the ports of the PEs of one run on b. A board runs one
// program: build a new board for the next.
func (b *Board) Ports(cfg RunConfig) ([]*Port, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := cfg.PEs
	if n == 0 {
		n = b.pes
	}
	switch {
	case b.cosim != nil:
		return nil, errors.New("timed: this timed board already runs a program: build a new board for the next")
	case n < 1 || n > b.pes:
		return nil, fmt.Errorf("timed: %d PEs on a timed board with %d cables plugged in: use 1 to %d", n, b.pes, b.pes)
	case len(cfg.Speed) > n || len(cfg.Start) > n:
		return nil, fmt.Errorf("timed: %d speeds and %d start times for %d PEs", len(cfg.Speed), len(cfg.Start), n)
	case cfg.Limit < 0:
		return nil, fmt.Errorf("timed: negative time limit %v", cfg.Limit)
	}
	if err := cfg.Timing.Validate(); err != nil {
		return nil, err
	}
	if cfg.Limit == 0 {
		cfg.Limit = 100 * time.Millisecond
	}
	c := &cosim{b: b, t: cfg.Timing, live: n, limit: b.now + cfg.Limit}
	for k := range n {
		speed, start := 1.0, time.Duration(0)
		if k < len(cfg.Speed) {
			speed = cfg.Speed[k]
		}
		if k < len(cfg.Start) {
			start = cfg.Start[k]
		}
		if !(speed > 0 && speed <= 100) || start < 0 {
			return nil, fmt.Errorf("timed: PE %d: speed factor %v (use above 0, up to 100) or start %v (use 0 or later)", k, speed, start)
		}
		c.ports = append(c.ports, &Port{c: c, pe: k, t: b.now + start, op: time.Duration(float64(cfg.Timing.Op) * speed),
			rng: rand.New(rand.NewPCG(cfg.Seed, uint64(k))), wake: make(chan uint8, 1)})
	}
	b.cosim = c
	return c.ports, nil
}

// cost draws the time to this PE's next operation.
func (p *Port) cost() time.Duration {
	t := p.c.t
	d := time.Duration(float64(p.op) * (1 + t.Jitter*(2*p.rng.Float64()-1)))
	if t.StallProb > 0 && p.rng.Float64() < t.StallProb {
		d += t.StallMin + time.Duration(p.rng.Int64N(int64(t.StallMax-t.StallMin)+1))
	}
	return d
}

// do queues an operation and waits for its turn.
func (p *Port) do(kind, v uint8) uint8 {
	c := p.c
	c.mu.Lock()
	if p.closed {
		c.mu.Unlock()
		return 0
	}
	p.t += p.cost()
	p.pending, p.kind, p.val = true, kind, v
	c.ready++
	c.dispatch()
	c.mu.Unlock()
	return <-p.wake
}

// dispatch runs the earliest pending operation once every live port has
// one.
func (c *cosim) dispatch() {
	if c.live == 0 || c.ready < c.live {
		return
	}
	var q *Port
	for _, p := range c.ports {
		if p.pending && (q == nil || p.t < q.t) {
			q = p
		}
	}
	q.pending = false
	c.ready--
	q.ops++
	if q.t > c.limit && q.err == nil {
		q.err = fmt.Errorf("timed: PE %d ran past the time limit of the timed run (%v of simulated time)", q.pe, c.limit)
	}
	q.wake <- c.b.exec(q.pe, q.kind, q.val, q.t)
}

// done reports whether every port of the run has closed.
func (c *cosim) done() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.live == 0
}

// exec runs one operation of PE k at time t.
func (b *Board) exec(k int, kind, v uint8, t time.Duration) uint8 {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.runUntil(t)
	p := &b.ports[k]
	r := v
	switch kind {
	case opWriteData:
		b.write(k, v, p.control)
	case opWriteControl:
		b.write(k, p.data, v)
	case opReadStatus:
		r = b.status(k)
	case opReadData:
		r = p.data
	case opReadControl:
		r = p.control
	}
	if b.rec != nil {
		b.rec.op(t, k, kind, r)
	}
	return r
}

// WriteData writes the data register.
func (p *Port) WriteData(v uint8) { p.do(opWriteData, v) }

// WriteControl writes the control register.
func (p *Port) WriteControl(v uint8) { p.do(opWriteControl, v) }

// ReadStatus reads the status register: the status lines as they are at
// the PC end of the cable at this operation's instant.
func (p *Port) ReadStatus() uint8 { return p.do(opReadStatus, 0) }

// ReadData reads back the data register.
func (p *Port) ReadData() uint8 { return p.do(opReadData, 0) }

// ReadControl reads back the control register.
func (p *Port) ReadControl() uint8 { return p.do(opReadControl, 0) }

// Err returns the port's error: the run's time limit passed, or the port
// used after Close.
func (p *Port) Err() error {
	p.c.mu.Lock()
	defer p.c.mu.Unlock()
	return p.err
}

// Close ends this PE's part in the run; the others go on without waiting
// for it. The registers keep their values.
func (p *Port) Close() error {
	c := p.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if !p.closed {
		p.closed = true
		p.err = fmt.Errorf("timed: PE %d's timed port is closed", p.pe)
		c.live--
		c.dispatch()
	}
	return nil
}

// Idle lets d of simulated time pass before this PE's next operation: the
// PE computes, or waits for something other than the board.
func (p *Port) Idle(d time.Duration) {
	if d <= 0 {
		return
	}
	p.c.mu.Lock()
	defer p.c.mu.Unlock()
	p.t += d
}

// PE returns the PE this port belongs to.
func (p *Port) PE() int { return p.pe }

// Now returns this PE's clock: the simulated time of its last operation.
func (p *Port) Now() time.Duration {
	p.c.mu.Lock()
	defer p.c.mu.Unlock()
	return p.t
}

// Ops returns the number of operations this port has made.
func (p *Port) Ops() uint64 {
	p.c.mu.Lock()
	defer p.c.mu.Unlock()
	return p.ops
}
