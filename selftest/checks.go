package selftest

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/peset"
)

// opCost runs op n times and returns the fewest and most port operations
// one run took: in lockstep on the emulator, else as they come (the fewest
// is then the cost when nobody was late).
func opCost(e *env, n int, op func() error) (lo, hi uint64, err error) {
	if e.lock != nil {
		if err := e.shared.meet(5 * e.timeout); err != nil {
			return 0, 0, err
		}
		e.lock.On = true
		defer func() { e.lock.On = false }()
	}
	lo = ^uint64(0)
	for range n {
		before := e.ops()
		if err := op(); err != nil {
			return 0, 0, err
		}
		d := e.ops() - before
		lo, hi = min(lo, d), max(hi, d)
	}
	return lo, hi, nil
}

// multiPCCostRuns is how often multi-PC mode repeats an operation whose
// cost it checks. Without lockstep, a run costs the minimum only for a PE
// that finds every other PE's strobes already there at each of its waits;
// PCs that differ in speed or share CPUs (virtual machines) rarely line up,
// and 10 or 20 runs missed it. 200 runs cost well under a second.
const multiPCCostRuns = 200

// costCheck records the port-operation cost of an operation.
func costCheck(e *env, name, key string, runs int, want uint64, lines string, op func() error) error {
	e.step = name
	if e.lock == nil {
		runs = multiPCCostRuns
	}
	lo, hi, err := opCost(e, runs, op)
	if err != nil {
		return err
	}
	if e.lock != nil {
		e.check(name, lo == want && hi == want, lines, "%d to %d port operations over %d runs in lockstep (expected %d)", lo, hi, runs, want)
	} else {
		e.check(name, lo == want, lines, "fewest port operations over %d runs: %d (expected %d)", runs, lo, want)
	}
	e.opsReport(key, lo)
	return nil
}

func barrierChecks(e *env) error {
	p, n := e.p, e.p.PEs()
	e.step = "300 barriers in step"
	bad := ""
	for i := range 300 {
		if e.shared != nil {
			e.shared.counts[p.Self()].Add(1)
		}
		if err := p.Barrier(); err != nil {
			return err
		}
		if e.shared != nil && bad == "" {
			for k := range n {
				if c := e.shared.counts[k].Load(); c < int64(i+1) {
					bad = fmt.Sprintf("left barrier %d before PE %d entered it", i+1, k)
				}
			}
		}
	}
	e.check(e.step, bad == "", "D6,D7,Busy", "%s", or(bad, "no PE left a barrier before every PE had entered it"))
	if err := costCheck(e, "barrier costs 2 port operations when nobody is late", "barrier", 20, 2, "D6,D7,Busy", p.Barrier); err != nil {
		return err
	}
	if err := costCheck(e, "NAND costs 5 port operations when nobody is late", "nand", 20, 5, "D0,D6,D7,Busy",
		func() error { _, err := p.NAND(0xf); return err }); err != nil {
		return err
	}
	if err := costCheck(e, fmt.Sprintf("vote costs %d NAND(s) for %d PEs", (n+3)/4, n), "vote", 10, uint64(5*((n+3)/4)), "D0,D6,D7,Busy",
		func() error { _, err := p.Vote(true); return err }); err != nil {
		return err
	}
	e.step = "CheckInterrupt with none pending"
	before := e.ops()
	err := p.CheckInterrupt()
	e.opsReport("check_interrupt", e.ops()-before)
	e.check(e.step, err == nil, "nInit,Busy", "%s", or(errString(err), "no interrupt reported"))
	return nil
}

func nandChecks(e *env) error {
	p, n := e.p, e.p.PEs()
	for j := range n {
		e.step = fmt.Sprintf("NAND: PE %d's data lines, one at a time", j)
		var bad []string
		var lines []string
		for b := range 4 {
			x := uint8(lpt.DataMask)
			if p.Self() == j {
				x &^= 1 << b
			}
			r, err := p.NAND(x)
			if err != nil {
				return err
			}
			if r != 1<<b {
				bad = append(bad, fmt.Sprintf("D%d low alone gave %04b, expected %04b", b, r, 1<<b))
				lines = addWrongBits(lines, r, 1<<b)
			}
		}
		e.check(e.step, len(bad) == 0, or(strings.Join(lines, ","), "D0"), "%s", or(strings.Join(bad, "; "), "each line alone gave exactly its bit"))
	}
	for _, c := range []struct{ x, want uint8 }{{0xf, 0}, {0, 0xf}, {0x5, 0xa}} {
		e.step = fmt.Sprintf("NAND: every PE drives %04b", c.x)
		r, err := p.NAND(c.x)
		if err != nil {
			return err
		}
		e.check(e.step, r == c.want, or(strings.Join(addWrongBits(nil, r, c.want), ","), "D0,D1,D2,D3"), "got %04b, expected %04b", r, c.want)
	}
	return nil
}

// addWrongBits adds to lines the data lines whose NAND result bit differs
// from the expected one: those are the lines to suspect (a bit stuck at 1
// is some PE's line held low), not the lines the check happened to drive.
func addWrongBits(lines []string, got, want uint8) []string {
	for b := range 4 {
		if d := fmt.Sprintf("D%d", b); (got^want)&(1<<b) != 0 && !slices.Contains(lines, d) {
			lines = append(lines, d)
		}
	}
	return lines
}

func aggregateChecks(e *env) error {
	p, n, self := e.p, e.p.PEs(), e.p.Self()
	var orAll, andAll uint8 = 0, lpt.DataMask
	var odd peset.Set
	for k := range n {
		orAll |= 1 << (k % 4)
		andAll &= lpt.DataMask &^ (1 << (k % 4))
		if k%2 == 1 {
			odd |= 1 << k
		}
	}
	type agg struct {
		name string
		run  func() (string, string, error) // got, want
	}
	b := func(v bool, err error) (string, error) { return fmt.Sprint(v), err }
	x := func(v uint8, err error) (string, error) { return fmt.Sprintf("%04b", v), err }
	m := func(v peset.Set, err error) (string, error) { return fmt.Sprintf("%#x", uint64(v)), err }
	wrap := func(got string, err error, want string) (string, string, error) { return got, want, err }
	checks := []agg{
		{"ANY: only the last PE true", func() (string, string, error) { g, err := b(p.Any(self == n-1)); return wrap(g, err, "true") }},
		{"ANY: every PE false", func() (string, string, error) { g, err := b(p.Any(false)); return wrap(g, err, "false") }},
		{"ALL: every PE true", func() (string, string, error) { g, err := b(p.All(true)); return wrap(g, err, "true") }},
		{"ALL: PE 0 false", func() (string, string, error) { g, err := b(p.All(self != 0)); return wrap(g, err, "false") }},
		{"OR4: PE k sets bit k mod 4", func() (string, string, error) {
			g, err := x(p.OR4(1 << (self % 4)))
			return wrap(g, err, fmt.Sprintf("%04b", orAll))
		}},
		{"AND4: PE k clears bit k mod 4", func() (string, string, error) {
			g, err := x(p.AND4(lpt.DataMask &^ (1 << (self % 4))))
			return wrap(g, err, fmt.Sprintf("%04b", andAll))
		}},
		{"vote: odd PEs true", func() (string, string, error) {
			g, err := m(p.Vote(self%2 == 1))
			return wrap(g, err, fmt.Sprintf("%#x", uint64(odd)))
		}},
		{"vote: every PE true", func() (string, string, error) {
			g, err := m(p.Vote(true))
			return wrap(g, err, fmt.Sprintf("%#x", uint64(1)<<n-1))
		}},
	}
	for _, c := range checks {
		e.step = c.name
		got, want, err := c.run()
		if err != nil {
			return err
		}
		e.check(c.name, got == want, "D0,D1,D2,D3", "got %s, expected %s", got, want)
	}
	return nil
}

func splitChecks(e *env) error {
	p, n, self := e.p, e.p.PEs(), e.p.Self()
	e.step = "split-phase barrier: start, query, complete"
	late := e.shared != nil && n > 1 && self == n-1
	if late {
		// Arrive only after PE 0 has seen the barrier incomplete.
		if err := e.shared.waitFor(e.shared.signal("queried"), 10*e.timeout, "PE 0's first query"); err != nil {
			return err
		}
	}
	if err := p.StartBarrier(); err != nil {
		return err
	}
	first, err := p.QueryBarrier()
	if err != nil {
		return err
	}
	if e.shared != nil && n > 1 && self == 0 {
		close(e.shared.signal("queried"))
	}
	done, polls := first, 0
	for deadline := time.Now().Add(5 * e.timeout); !done && time.Now().Before(deadline); polls++ {
		runtime.Gosched() // the PE computes between queries; let the late PE run
		if done, err = p.QueryBarrier(); err != nil {
			return err
		}
	}
	if !done {
		return fmt.Errorf("QueryBarrier still false after %v", 5*e.timeout)
	}
	if e.shared != nil && n > 1 && self == 0 {
		e.check("split-phase barrier: query while a PE is late", !first, "D6,D7,Busy", "first QueryBarrier returned %v with PE %d not arrived (expected false), then true after %d polls", first, n-1, polls)
	}
	e.check(e.step, true, "D6,D7,Busy", "completed")
	e.step = "barrier after a split-phase barrier"
	if err := p.Barrier(); err != nil {
		return err
	}
	e.check(e.step, true, "D6,D7,Busy", "in step")
	return nil
}

func interruptChecks(e *env) error {
	p, n, self := e.p, e.p.PEs(), e.p.Self()
	code := func(r int) uint8 { return uint8(r*7+5) & lpt.DataMask }
	carried := -1 // a later round's code that preempted this PE's last barrier
	for r := range n {
		e.step = fmt.Sprintf("interrupt from PE %d (code %#x) delivered to all", r, code(r))
		// A PE still finishing its previous operation would take a new
		// interrupt as part of it: let every PE get there first (in-process
		// on the emulator; on separate PCs, a pause well above a port
		// operation).
		if e.shared != nil {
			if err := e.shared.meet(5 * e.timeout); err != nil {
				return err
			}
		} else if self == r {
			time.Sleep(e.timeout / 10)
		}
		var got uint8
		switch {
		case self == r:
			var err error
			if got, err = p.Interrupt(code(r)); err != nil {
				return err
			}
		case carried >= 0:
			got, carried = uint8(carried), -1
		default:
			err := p.Barrier()
			var ie *papers.InterruptError
			if !errors.As(err, &ie) {
				if err == nil {
					return errors.New("the barrier completed without seeing the interrupt")
				}
				return err
			}
			got = ie.Code
		}
		e.check(e.step, got == code(r), "nAutoFd,nStrobe,nInit,Busy,D0,D1,D2,D3", "received code %#x, expected %#x", got, code(r))
		// Back in step. The next raiser may raise before this PE has seen
		// this barrier complete: the driver then acknowledges the next
		// interrupt inside this barrier, which is this PE's next round.
		err := p.Barrier()
		var ie *papers.InterruptError
		if errors.As(err, &ie) && r+1 < n && self != r+1 {
			carried = int(ie.Code)
		} else if err != nil {
			return fmt.Errorf("barrier after the interrupt: %w", err)
		}
	}
	return nil
}

func ledChecks(e *env) error {
	p, n, self := e.p, e.p.PEs(), e.p.Self()
	e.step = "LEDs green while running"
	if err := e.shared.meet(5 * e.timeout); err != nil {
		return err
	}
	if self == 0 {
		e.check(e.step, allLEDs(e.board, n, lpt.Green) == "", "D4,D5", "%s", or(allLEDs(e.board, n, lpt.Green), "every LED green"))
	}
	if err := e.shared.meet(5 * e.timeout); err != nil {
		return err
	}
	if n > 1 {
		e.step = "LED red while waiting for a late PE"
		if self == n-1 {
			// Be late until PE 0's LED turns red.
			deadline := time.Now().Add(5 * e.timeout)
			for e.board.LED(0) != lpt.Red && time.Now().Before(deadline) {
				time.Sleep(50 * time.Microsecond)
			}
			l := e.board.LED(0)
			e.check(e.step, l == lpt.Red, "D4,D5", "PE 0's LED was %s while PE %d was late", l, self)
		}
		if err := p.Barrier(); err != nil {
			return err
		}
		if err := e.shared.meet(5 * e.timeout); err != nil {
			return err
		}
		e.step = "LEDs green again after the barrier"
		if self == 0 {
			e.check(e.step, allLEDs(e.board, n, lpt.Green) == "", "D4,D5", "%s", or(allLEDs(e.board, n, lpt.Green), "every LED green"))
		}
		if err := e.shared.meet(5 * e.timeout); err != nil {
			return err
		}
	}
	return nil
}

// allLEDs lists the PEs whose LED is not the given colour.
func allLEDs(b *emu.Board, n int, want lpt.LED) string {
	var bad []string
	for k := range n {
		if l := b.LED(k); l != want {
			bad = append(bad, fmt.Sprintf("PE %d %s", k, l))
		}
	}
	if len(bad) == 0 {
		return ""
	}
	return "expected " + want.String() + ": " + strings.Join(bad, ", ")
}

func leaveChecks(e *env) error {
	p, n, self := e.p, e.p.PEs(), e.p.Self()
	leaver := n - 1
	left, othersDone := e.shared.signal("left"), e.shared.signal("others done")
	const rejoinCode = 0x9
	var err error
	if self == leaver {
		err = leaveAndRejoin(e, rejoinCode, left, othersDone)
	} else {
		err = watchLeaver(e, leaver, rejoinCode, left, othersDone)
	}
	if err != nil {
		return err
	}
	e.step = "vote after rejoin"
	if err := p.Barrier(); err != nil {
		return err
	}
	mask, err := p.Vote(true)
	if err != nil {
		return err
	}
	e.check(e.step, mask == 1<<n-1, "D6,D7", "the vote named %s, expected every PE", mask)
	return nil
}

// leaveAndRejoin is the leaver's part of leaveChecks: it leaves, waits
// until the others have worked without it, and rejoins.
func leaveAndRejoin(e *env, rejoinCode uint8, left, othersDone chan struct{}) error {
	p := e.p
	e.step = "leave (0xcf)"
	if err := p.Leave(); err != nil {
		return err
	}
	close(left)
	if err := e.shared.waitFor(othersDone, 20*e.timeout, "the other PEs to finish without the leaver"); err != nil {
		return err
	}
	e.step = "rejoin"
	code, err := p.Rejoin(rejoinCode)
	if err != nil {
		return err
	}
	e.check(e.step, code == rejoinCode, "nAutoFd,nStrobe", "rejoin delivered interrupt code %#x, expected %#x", code, rejoinCode)
	return nil
}

// watchLeaver is the others' part of leaveChecks: they see the leave as
// an interrupt, work without the leaver, and see its rejoin.
func watchLeaver(e *env, leaver int, rejoinCode uint8, left, othersDone chan struct{}) error {
	p, n, self := e.p, e.p.PEs(), e.p.Self()
	// Leave reaches the others as an interrupt naming the leaver.
	e.step = "leave seen as an interrupt"
	ie, err := untilInterrupt(p, fmt.Sprintf("PE %d never left", leaver))
	if err != nil {
		return err
	}
	e.check(e.step, ie.Left == peset.Of(leaver), "nAutoFd,nStrobe", "the interrupt named %s as left, expected PE %d", ie.Left, leaver)
	if err := e.shared.waitFor(left, 20*e.timeout, fmt.Sprintf("PE %d to leave", leaver)); err != nil {
		return err
	}
	e.step = "barriers and vote without a PE that left"
	for range 3 {
		if err := p.Barrier(); err != nil {
			return err
		}
	}
	mask, err := p.Vote(true)
	if err != nil {
		return err
	}
	want := (peset.Set(1)<<n - 1) &^ peset.Of(leaver)
	e.check(e.step, mask == want, "D6,D7", "the vote named %s, expected %s (PE %d ignored)", mask, want, leaver)
	if self == 0 {
		close(othersDone)
	}
	// Rejoin reaches the others as an interrupt in one of their barriers.
	e.step = "rejoin seen as an interrupt"
	if ie, err = untilInterrupt(p, fmt.Sprintf("PE %d never rejoined", leaver)); err != nil {
		return err
	}
	e.check(e.step, ie.Code == rejoinCode, "nAutoFd,nStrobe", "rejoin delivered interrupt code %#x, expected %#x", ie.Code, rejoinCode)
	return nil
}

// untilInterrupt runs barriers until one returns a parallel interrupt.
func untilInterrupt(p *papers.PE, never string) (*papers.InterruptError, error) {
	for i := 0; i <= 10_000_000; i++ {
		err := p.Barrier()
		var ie *papers.InterruptError
		if errors.As(err, &ie) {
			return ie, nil
		}
		if err != nil {
			return nil, err
		}
	}
	return nil, errors.New(never)
}

func stallChecks(e *env) error {
	p, n, self := e.p, e.p.PEs(), e.p.Self()
	staller := n - 1
	released, over := e.shared.signal("stall seen"), e.shared.signal("stall over")
	e.step = fmt.Sprintf("PE %d holding S1=S0=0 stalls the others until their deadline", staller)
	if self == staller {
		p.Port().WriteData(lpt.DataMask) // both strobes low
		// Hold until every other PE has timed out, then let them close.
		for range n - 1 {
			if err := e.shared.waitFor(released, 20*e.timeout, "the others' barrier deadlines"); err != nil {
				return err
			}
		}
		for range n - 1 {
			over <- struct{}{}
		}
		return nil
	}
	err := p.Barrier()
	released <- struct{}{}
	// Closing now would park this port while a slower PE is still waiting,
	// and its timeout would then blame this PE as well as the staller.
	if werr := e.shared.waitFor(over, 20*e.timeout, "PE "+strconv.Itoa(staller)+" to end the stall"); werr != nil {
		return werr
	}
	// The emulator names who holds the barrier, and records it for the
	// board's PortInfo as the timeout's error is made: the staller, and
	// nobody else.
	_, timedOut := errors.AsType[*papers.TimeoutError](err)
	named := timedOut && slices.Equal(e.board.PortInfo(self).Late, []int{staller})
	e.check(e.step, named, "D6,D7", "barrier returned %q", errString(err))
	return nil
}

func or(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
