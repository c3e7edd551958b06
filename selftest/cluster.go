package selftest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/lpt/lpttest"
	"github.com/ttlpapers/ttlpapers/papers"
)

// env is what a cluster check sees on one PE.
type env struct {
	p       *papers.PE
	ops     func() uint64
	board   *emu.Board        // nil on real ports
	shared  *shared           // in-process coordination; nil on real ports
	lock    *lpttest.Lockstep // nil on real ports
	timeout time.Duration
	res     *[]result
	step    string
	portOps map[string]uint64 // written by PE 0 only
	mu      *sync.Mutex
}

type result struct {
	name   string
	pass   bool
	detail string
	lines  string // port lines to suspect when it fails and no wiring diagnosis is known
	// secondary marks a failure caused by another PE's failure.
	secondary bool
}

// check records one result on this PE.
func (e *env) check(name string, pass bool, lines, format string, args ...any) {
	*e.res = append(*e.res, result{name, pass, fmt.Sprintf(format, args...), lines, false})
}

func (e *env) opsReport(name string, v uint64) {
	if e.p.Self() != 0 {
		return
	}
	e.mu.Lock()
	e.portOps[name] = v
	e.mu.Unlock()
}

// shared is the in-process coordination the emulator allows: PEs that are
// goroutines can meet outside the board, which lets checks make one PE
// late on purpose and measure operations with nobody late.
type shared struct {
	n       int
	dead    chan struct{} // closed when a PE's check fails with an error
	kill    sync.Once
	mu      sync.Mutex
	count   int
	gen     chan struct{}
	signals map[string]chan struct{}
	counts  []atomic.Int64
}

func newShared(n int) *shared {
	return &shared{n: n, dead: make(chan struct{}), gen: make(chan struct{}), signals: map[string]chan struct{}{}, counts: make([]atomic.Int64, n)}
}

// abort stops every in-process wait; it reports whether this call was the
// first (the others' failures are then consequences).
func (s *shared) abort() (first bool) {
	s.kill.Do(func() { close(s.dead); first = true })
	return first
}

// meet waits until every PE has called meet (a reusable rendezvous).
func (s *shared) meet(d time.Duration) error {
	s.mu.Lock()
	ch := s.gen
	s.count++
	if s.count == s.n {
		s.count = 0
		s.gen = make(chan struct{})
		close(ch)
		s.mu.Unlock()
		return nil
	}
	s.mu.Unlock()
	return s.waitFor(ch, d, "the other PEs at an in-process rendezvous")
}

func (s *shared) signal(name string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.signals[name]
	if ch == nil {
		ch = make(chan struct{}, s.n) // buffered: senders never wait for a receiver that gave up
		s.signals[name] = ch
	}
	return ch
}

func (s *shared) waitFor(ch <-chan struct{}, d time.Duration, what string) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return nil
	case <-s.dead:
		return errors.New("selftest: abandoned: another PE's check failed")
	case <-t.C:
		return fmt.Errorf("selftest: waited %v for %s", d, what)
	}
}

// A session is a group of checks run on a freshly opened cluster, so that
// a failed check does not stop the ones after it.
type session struct {
	name    string
	lines   string // lines to suspect when its check-in fails
	emuOnly bool
	minPEs  int
	run     func(e *env) error
}

var sessions = []session{
	{name: "barrier", lines: "D6,D7,Busy", run: barrierChecks},
	{name: "NAND", lines: "D0,D1,D2,D3", run: nandChecks},
	{name: "aggregates", lines: "D0,D1,D2,D3", run: aggregateChecks},
	{name: "split-phase barrier", lines: "D6,D7,Busy", run: splitChecks},
	{name: "interrupts", lines: "nAutoFd,nStrobe,nInit,Busy", run: interruptChecks},
	{name: "LEDs", lines: "D4,D5", emuOnly: true, run: ledChecks},
	{name: "leave and rejoin", lines: "D6,D7", emuOnly: true, minPEs: 2, run: leaveChecks},
	{name: "stalled PE", lines: "D6,D7", emuOnly: true, minPEs: 2, run: stallChecks},
}

// runCluster runs the driver's primitives on every PE (emulator) or on this
// PC's PE (multi-PC), one session at a time.
func runCluster(ctx context.Context, rep *Report, h *hw.Netlist, board *emu.Board, cfg Config, findings []Check) {
	var mu sync.Mutex
	checkedIn := false
	for _, s := range sessions {
		if s.emuOnly && board == nil {
			rep.add(Check{Name: s.name, Status: StatusNotCheckable, Line: s.lines,
				Detail: "needs every PE in one process (the emulator): not run in multi-PC mode"})
			continue
		}
		if cfg.PEs < s.minPEs {
			rep.add(Check{Name: s.name, Status: StatusNotCheckable, Line: s.lines, Detail: fmt.Sprintf("needs at least %d PEs", s.minPEs)})
			continue
		}
		results, openErr := runSession(ctx, rep, board, cfg, s, &mu, len(findings) > 0)
		if openErr != nil {
			rep.add(failure(h, cfg, findings, Check{Name: "check-in for " + s.name + " checks", Detail: checkInDetail(openErr, len(findings) > 0)}, s.lines))
			if !checkedIn {
				rep.add(failure(h, cfg, findings, Check{Name: "driver checks", Detail: "not run: the cluster could not check in"}, s.lines))
				return
			}
			continue
		}
		if !checkedIn {
			rep.add(Check{Name: "check-in (every PE opens, barrier, vote)", Pass: true, Detail: fmt.Sprintf("%d PEs answered", cfg.PEs)})
			checkedIn = true
		}
		for _, r := range results {
			c := Check{Name: r.name, Pass: r.pass, Detail: r.detail}
			if !r.pass {
				c = failure(h, cfg, findings, c, r.lines)
			}
			rep.add(c)
		}
	}
	if board != nil {
		var lit []string
		for k := range cfg.PEs {
			if l := board.LED(k); l != lpt.Dark {
				lit = append(lit, fmt.Sprintf("PE %d %s", k, l))
			}
		}
		c := Check{Name: "LEDs dark after Close", Pass: len(lit) == 0, Detail: "every LED dark"}
		if !c.Pass {
			c = failure(h, cfg, findings, Check{Name: c.Name, Detail: strings.Join(lit, ", ")}, "D4,D5")
		}
		rep.add(c)
	}
}

// failure completes a failed driver check: with the wiring diagnosis when
// there is one, else with the lines the check depends on.
func failure(h *hw.Netlist, cfg Config, findings []Check, c Check, lines string) Check {
	if len(findings) > 0 {
		return withFinding(findings[0], c.Name, c.Detail)
	}
	c.Status, c.Pass = StatusFail, false
	names := strings.Split(or(lines, "D6,D7,Busy"), ",")
	c.Line = strings.Join(names, "/")
	l := lineNamed(names[0])
	c.Pin = l.Pin
	var chips []string
	for _, n := range names {
		chips = append(chips, h.Trace(cfg.PE, lineNamed(n)))
	}
	c.Chip = strings.Join(chips, "; ")
	if cfg.Port == nil {
		c.Cause = "the wiring probe found no fault: a driver or emulator problem"
	} else {
		c.Cause = "one of these lines on some PE's cable, or a PC that did not start selftest with the same PE count: run single-PC mode on each PC to find which"
	}
	return c
}

// runSession opens the cluster, runs the session's checks on every PE and
// merges their results: a check passes when it passes on every PE. The
// error is a failed check-in.
//
// With a wiring diagnosis (diagnosed), the failures' details leave out the
// emulator's account of who stalled a wait (papers.TimeoutError's Stall):
// the diagnosis says what a board's readings can tell, and an oracle
// naming one PE where the diagnosis cannot tell them apart would
// contradict it.
func runSession(ctx context.Context, rep *Report, board *emu.Board, cfg Config, s session, mu *sync.Mutex, diagnosed bool) ([]result, error) {
	// The selftest tests the data lines itself, and names more than
	// check-in's test would; it counts port operations, to which a census
	// would add.
	pcfg := papers.Config{PEs: cfg.PEs, PE: cfg.PE, Timeout: cfg.Timeout, CheckInTimeout: cfg.CheckInTimeout, Context: ctx, NoLineTest: true, CensusEvery: -1}
	per := make([][]result, cfg.PEs)
	var opened atomic.Int32
	sh := newShared(cfg.PEs)
	body := func(p *papers.PE, ops func() uint64, b *emu.Board, sh *shared, lp *lpttest.Lockstep) error {
		opened.Add(1)
		e := &env{p: p, ops: ops, board: b, shared: sh, lock: lp, timeout: cfg.Timeout, res: &per[p.Self()], portOps: rep.PortOps, mu: mu}
		err := s.run(e)
		if err != nil {
			// Stop the other PEs' waits at once: the first failure is the
			// finding, the others' abandoned waits are its consequences.
			primary := sh == nil || sh.abort()
			*e.res = append(*e.res, result{e.step, false, errText(err, diagnosed), s.lines, !primary})
		}
		return err
	}
	var err error
	opens := int32(len(per)) // PEs that must open, else err is a check-in failure
	if board != nil {
		if err := notStarted(board, cfg.PEs); err != nil {
			return nil, err
		}
		err = emulate.RunPorts(ctx, board, cfg.PEs, func(ctx context.Context, k int, port *emu.Port) error {
			lp := &lpttest.Lockstep{Port: cfg.traced(k, port), Meet: func() error { return sh.meet(5 * cfg.Timeout) }}
			c := pcfg
			c.PE, c.Context = k, ctx
			p, err := papers.Open(lp, c)
			if err != nil {
				sh.abort() // the PEs that did open stop waiting for this one
				return err
			}
			defer p.Close()
			return body(p, port.Ops, board, sh, lp)
		})
	} else {
		cp := lpttest.NewCounting(cfg.Port)
		var p *papers.PE
		if p, err = papers.Open(cp, pcfg); err == nil {
			err = body(p, cp.Ops, nil, nil, nil)
			p.Close()
		}
		// Hold both strobes low, as a PC that has not started does, so that
		// the others' next check-in waits for this PC; the data lines high,
		// as papers parks a port, so that no NAND of theirs reads them.
		cfg.Port.WriteData(lpt.DataMask)
		opens = 1 // per holds only this PC's results, under its PE id
	}
	if err != nil && opened.Load() < opens {
		return nil, err
	}
	return merge(per), nil
}

// checkInDetail describes a failed check-in: the driver's errors, or with
// a wiring diagnosis (diagnosed) only how long the PEs waited, the
// diagnosis saying why.
func checkInDetail(err error, diagnosed bool) string {
	var te *papers.TimeoutError
	if diagnosed && errors.As(err, &te) {
		return fmt.Sprintf("the PEs did not check in: the check-in barrier did not complete within %v", te.Waited)
	}
	return errText(err, diagnosed)
}

// errText is err's message on one line, the errors a join holds (the
// PEs') one after the other; with hideStall (a wiring diagnosis says why),
// a timeout says only how long the PE waited, from its value.
func errText(err error, hideStall bool) string {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		parts := make([]string, 0, len(j.Unwrap()))
		for _, e := range j.Unwrap() {
			parts = append(parts, errText(e, hideStall))
		}
		return strings.Join(parts, "; ")
	}
	if te, ok := err.(*papers.TimeoutError); ok && hideStall {
		return fmt.Sprintf("PE %d: %s did not complete within %v", te.PE, te.Op, te.Waited)
	}
	return err.Error()
}

// notStarted puts every PE's port back in its power-on state (data and
// control 0: both strobes low), as if no PE had started yet. A check-in
// must see the PEs that have not opened yet holding the barrier; ports
// left transparent by a previous session would let it complete without
// them.
func notStarted(b *emu.Board, n int) error {
	for k := range n {
		p, err := b.Port(k)
		if err != nil {
			return err
		}
		p.WriteControl(0)
		p.WriteData(0)
		p.Close()
	}
	return nil
}

// merge combines per-PE results by check name, in order of first appearance.
func merge(per [][]result) []result {
	var out []result
	idx := map[string]int{}
	for pe, rs := range per {
		for _, r := range rs {
			i, ok := idx[r.name]
			if !ok {
				i = len(out)
				idx[r.name] = i
				r.detail = "every PE: " + r.detail
				if !r.pass {
					r.detail = fmt.Sprintf("PE %d: %s", pe, strings.TrimPrefix(r.detail, "every PE: "))
				}
				out = append(out, r)
				continue
			}
			if !r.pass && (out[i].pass || out[i].secondary && !r.secondary) {
				out[i].secondary = r.secondary
				out[i].pass = false
				out[i].detail = fmt.Sprintf("PE %d: %s", pe, r.detail)
			}
		}
	}
	return out
}
