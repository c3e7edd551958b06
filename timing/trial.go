package timing

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/ttlpapers/ttlpapers/emu/timed"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/papers"
)

// TrialResult is what one trial did.
type TrialResult struct {
	Trial  int
	Failed bool
	// Wrong lists the results that differed from the true NAND (or the
	// raised code, or a barrier left early).
	Wrong []Wrong
	// Stalled lists the PEs that polled 64 times in one wait: a PE they
	// waited for never came, and the driver's interrupt check, timed by
	// the wall clock, would make the run depend on the machine.
	Stalled []int
	Err     error // a PE's error (a stall ends with one too)
	// Reads[k][i] is PE k's result read for operation i; Arrivals[k][i] is
	// when PE k's write that flipped its strobes for operation i ran.
	Reads    [][]Read
	Arrivals [][]time.Duration
	// The trial's draw.
	Metres  []float64
	Speeds  []float64
	PowerUp []bool
}

// Read is a PE's result read of one operation.
type Read struct {
	At        time.Duration
	Got, Want uint8
	// Ready is when the PE first saw the barrier complete, and ReadyGot
	// the NAND in that status: the result for the variants that do not
	// resample, one operation or more before it for those that do.
	Ready    time.Duration
	ReadyGot uint8
}

// Wrong is one wrong result, and which race produced it.
type Wrong struct {
	PE, Index int
	Read
	Cause string
}

// Causes of wrong results.
const (
	// Stale: the PE read before the new NAND reached it (race a).
	Stale = "stale"
	// Overwritten: another PE had already written its next data (race b).
	Overwritten = "overwritten"
	// Early: a PE left a barrier before the last PE arrived.
	Early = "early"
	// WrongCode: a PE got another interrupt code than the one raised.
	WrongCode = "wrong code"
)

// trial is one trial being run.
type trial struct {
	p       Params
	v       Variant
	i, n    int // the trial's number, its PEs
	contrib [][]uint8
	res     [][]uint8
	probes  []*probe
}

// Trial runs trial i of variant v. When vcd is not nil the run is recorded
// on it as a VCD file in nanoseconds. Its error is for a run that could not
// be set up; what happened on the board is in the result.
func Trial(p Params, v Variant, i int, vcd io.Writer) (*TrialResult, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("timing: %w", err)
	}
	draw := rand.New(rand.NewPCG(p.Seed, uint64(i)))
	t := &trial{p: p, v: v, i: i, n: p.PEs}
	r := &TrialResult{Trial: i}
	run := timed.RunConfig{Timing: p.Port, Seed: draw.Uint64()}
	boardSeed := draw.Uint64()
	for range t.n {
		r.Metres = append(r.Metres, p.Metres[0]+draw.Float64()*(p.Metres[1]-p.Metres[0]))
		r.Speeds = append(r.Speeds, 1+p.Speed*(2*draw.Float64()-1))
		run.Start = append(run.Start, time.Duration(draw.Int64N(2*int64(p.Port.Op))))
		c := make([]uint8, max(p.NANDs, 1))
		for j := range c {
			c[j] = uint8(draw.IntN(16))
		}
		t.contrib = append(t.contrib, c)
	}
	run.Speed = r.Speeds
	b, err := timed.New(timed.Config{PEs: t.n, Delays: p.Delays, Cable: timed.Cable{Metres: r.Metres, Skew: p.Skew, Wire: p.Wire}, Seed: boardSeed})
	if err != nil {
		return nil, err
	}
	r.PowerUp = b.PowerUpStates()
	var rec *timed.Recording
	if vcd != nil {
		if rec, err = b.RecordVCD(vcd); err != nil {
			return nil, err
		}
	}
	ports, err := b.Ports(run)
	if err != nil {
		return nil, err
	}
	r.Err = t.run(ports)
	if rec != nil {
		if err := rec.Close(); err != nil {
			return nil, err
		}
	}
	t.evaluate(r)
	return r, nil
}

// run runs every PE's program, one goroutine each.
func (t *trial) run(ports []*timed.Port) error {
	t.res = make([][]uint8, t.n)
	errs := make([]error, t.n)
	var wg sync.WaitGroup
	for k, port := range ports {
		pr := &probe{port: port}
		t.probes = append(t.probes, pr)
		t.res[k] = make([]uint8, max(t.p.NANDs, 1))
		wg.Go(func() {
			defer port.Close()
			if err := t.pe(k, pr); err != nil {
				errs[k] = fmt.Errorf("PE %d: %w", k, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// openPace spaces the operations of the check-in (papers.Open), so that
// its vote settles whatever the cables: the trials test the operations
// after it, and a check-in that failed would stand for the NAND, which has
// its own row.
const openPace = 20 * time.Microsecond

// pe is PE k's program: check in with the driver, at leisure, run the
// operations at the port's speed, and end with a barrier, so that no PE
// parks its port (changing its data lines) before every PE has read its
// last result.
func (t *trial) pe(k int, pr *probe) error {
	pr.pace = openPace
	// The board is the trial's own, just made (FreshBoard); the trials test
	// the data lines themselves (NoLineTest) and time the operations they
	// run and no others (no census).
	// Check-in's random numbers come from the trial's seed, so that a
	// trial repeats exactly: a stream of PE k's own, beside the trial's
	// (rand.NewPCG(Seed, i)) and not drawn from it.
	p, err := papers.Open(pr, papers.Config{PE: k, PEs: t.n, Timeout: time.Minute, NANDMode: t.v.mode, FreshBoard: true, NoLineTest: true, CensusEvery: -1, Rand: rand.NewPCG(t.p.Seed, ^(uint64(t.i)<<6 | uint64(k)))})
	pr.pace = 0
	if err != nil {
		return err
	}
	defer p.Close()
	switch t.v.Op {
	case "nand":
		var raw *rawPE
		if t.v.nand != nil {
			raw = &rawPE{port: pr, last: pr.data}
		}
		for i, x := range t.contrib[k][:t.p.NANDs] {
			pr.mark()
			if raw != nil {
				t.res[k][i], err = t.v.nand(raw, x)
			} else {
				t.res[k][i], err = p.NAND(x)
			}
			if err != nil {
				return err
			}
		}
		pr.mark()
		if raw != nil {
			return raw.barrier()
		}
	case "barrier":
		for range t.p.NANDs {
			pr.mark()
			if err := p.Barrier(); err != nil {
				return err
			}
		}
		pr.mark()
	case "interrupt":
		pr.mark()
		if t.res[k][0], err = interrupt(p); err != nil {
			return err
		}
		pr.mark()
	}
	return p.Barrier()
}

// evaluate compares every result with the truth and says why the wrong
// ones are wrong.
func (t *trial) evaluate(r *TrialResult) {
	count := t.p.NANDs
	if t.v.Op == "interrupt" {
		count = 1
	}
	for k, pr := range t.probes {
		if pr.stalled {
			r.Stalled = append(r.Stalled, k)
		}
		var reads []Read
		var arrivals []time.Duration
		for i := range count {
			seg := pr.segment(i)
			rd := Read{At: seg.resultRead(), Got: t.res[k][i], Want: t.want(i)}
			rd.Ready, rd.ReadyGot = seg.readyRead()
			reads, arrivals = append(reads, rd), append(arrivals, seg.firstFlip())
		}
		r.Reads, r.Arrivals = append(r.Reads, reads), append(r.Arrivals, arrivals)
	}
	for k := range t.probes {
		for i, rd := range r.Reads[k] {
			if cause := t.check(r, k, i, rd); cause != "" {
				r.Wrong = append(r.Wrong, Wrong{PE: k, Index: i, Read: rd, Cause: cause})
			}
		}
	}
	r.Failed = len(r.Wrong) > 0 || len(r.Stalled) > 0 || r.Err != nil
}

// want is the right result of operation i.
func (t *trial) want(i int) uint8 {
	switch t.v.Op {
	case "interrupt":
		return interruptCode
	case "barrier":
		return 0
	}
	and := uint8(lpt.DataMask)
	for _, c := range t.contrib {
		and &= c[i]
	}
	return ^and & lpt.DataMask
}

// check returns why PE k's result of operation i is wrong, or "".
func (t *trial) check(r *TrialResult, k, i int, rd Read) string {
	switch t.v.Op {
	case "barrier":
		for j := range t.probes {
			if r.Arrivals[j][i] > rd.At {
				return Early
			}
		}
		return ""
	case "interrupt":
		if rd.Got != rd.Want {
			return WrongCode
		}
		return ""
	}
	if rd.Got == rd.Want {
		return ""
	}
	for j, pr := range t.probes {
		if at, ok := pr.segment(i + 1).dataChange(); j != k && ok && at < rd.At {
			return Overwritten
		}
	}
	return Stale
}

// probe wraps a PE's timed port and logs its operations with their
// simulated times, split into segments by mark.
type probe struct {
	port    *timed.Port
	log     []opRec
	marks   []int         // log index where each segment starts
	data    uint8         // the data register last written
	reads   int           // status reads since the last write
	pace    time.Duration // idle time before each operation
	stalled bool
}

type opRec struct {
	at         time.Duration
	write      bool
	prev, data uint8 // writes: the data register before and after (control writes keep it)
	status     uint8 // status reads: the value
}

// stallPolls is where the driver's first interrupt check would come in a
// wait: 64 polls.
const stallPolls = 64

func (p *probe) mark() { p.marks = append(p.marks, len(p.log)) }

func (p *probe) write(v uint8, data bool) {
	prev := p.data
	if data {
		p.data = v
	}
	p.reads = 0
	p.log = append(p.log, opRec{at: p.port.Now(), write: true, prev: prev, data: p.data})
}

func (p *probe) WriteData(v uint8)    { p.port.Idle(p.pace); p.port.WriteData(v); p.write(v, true) }
func (p *probe) WriteControl(v uint8) { p.port.Idle(p.pace); p.port.WriteControl(v); p.write(v, false) }
func (p *probe) ReadData() uint8      { p.port.Idle(p.pace); return p.read(p.port.ReadData()) }
func (p *probe) ReadControl() uint8   { p.port.Idle(p.pace); return p.read(p.port.ReadControl()) }
func (p *probe) Close() error         { return nil } // the trial closes the timed port

func (p *probe) ReadStatus() uint8 {
	p.port.Idle(p.pace)
	v := p.read(p.port.ReadStatus())
	p.log[len(p.log)-1].status = v
	if p.reads++; p.reads >= stallPolls {
		p.stalled = true
	}
	return v
}

func (p *probe) read(v uint8) uint8 {
	p.log = append(p.log, opRec{at: p.port.Now(), data: p.data})
	return v
}

var errStalled = errors.New("timing: stalled: polled 64 times in one wait (a PE it waited for did not come)")

func (p *probe) Err() error {
	if p.stalled {
		return errStalled
	}
	return p.port.Err()
}

// segment returns the operations between mark i and mark i+1.
func (p *probe) segment(i int) segment {
	if i >= len(p.marks) {
		return nil
	}
	end := len(p.log)
	if i+1 < len(p.marks) {
		end = p.marks[i+1]
	}
	return p.log[p.marks[i]:end]
}

type segment []opRec

func (s segment) flips() []int {
	var f []int
	for i, o := range s {
		if o.write && (o.prev^o.data)&lpt.Strobes != 0 {
			f = append(f, i)
		}
	}
	return f
}

// firstFlip is when the operation's strobe flip ran (its arrival).
func (s segment) firstFlip() time.Duration {
	if f := s.flips(); len(f) > 0 {
		return s[f[0]].at
	}
	return -1
}

// resultRead is when the read that gave the result ran: the last read
// before the trailing barrier's strobe flip, or the last read of all.
func (s segment) resultRead() time.Duration {
	end := len(s)
	if f := s.flips(); len(f) > 1 {
		end = f[1]
	}
	for i := end - 1; i >= 0; i-- {
		if !s[i].write {
			return s[i].at
		}
	}
	return -1
}

// readyRead is the first status read after the operation's strobe flip
// that shows the barrier complete, and the NAND it shows.
func (s segment) readyRead() (time.Duration, uint8) {
	f := s.flips()
	if len(f) == 0 {
		return -1, 0
	}
	want := s[f[0]].data&lpt.S0 != 0 // after a flip to S0, ready reads 1
	for _, o := range s[f[0]+1:] {
		if !o.write && o.status != 0 && (o.status&lpt.RDY != 0) == want {
			return o.at, result(o.status)
		}
	}
	return -1, 0
}

// dataChange is when the PE first drove new data lines in this segment.
func (s segment) dataChange() (time.Duration, bool) {
	for _, o := range s {
		if o.write && (o.prev^o.data)&lpt.DataMask != 0 {
			return o.at, true
		}
	}
	return 0, false
}
