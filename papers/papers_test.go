package papers_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/peset"
)

// sizes are the PE counts the suites run on: every board size, plus odd
// counts that leave connectors unplugged.
var sizes = []int{2, 3, 4, 8, 16, 32}

// rounds scales a 4-PE iteration count down for larger clusters, whose
// goroutines share two cores.
func rounds(n, base int) int {
	if testing.Short() {
		base /= 10
	}
	if n <= 4 {
		return base
	}
	return max(base*4/(n*n), 20)
}

// TestBarrierNeverEarly checks the barrier's one promise: no PE leaves
// barrier k before every PE has entered it, with random delays.
func TestBarrierNeverEarly(t *testing.T) {
	for _, n := range sizes {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			iters := rounds(n, 10000)
			entered := make([]atomic.Int64, n)
			err := emulate.Run(n, papers.Config{}, func(p *papers.PE) error {
				rng := rand.New(rand.NewPCG(uint64(p.Self()), 1))
				for i := int64(1); i <= int64(iters); i++ {
					if rng.IntN(8) == 0 {
						runtime.Gosched()
					}
					for d := rng.IntN(200); d > 0; d-- { // a little computation
						_ = rng.Uint64()
					}
					entered[p.Self()].Store(i)
					if err := p.Barrier(); err != nil {
						return err
					}
					for k := range entered {
						if got := entered[k].Load(); got < i {
							return fmt.Errorf("left barrier %d while PE %d had entered only %d", i, k, got)
						}
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// contributions gives every PE the same random sequence of all PEs' values,
// so each can compute the expected result itself.
func contributions(round, n int) []uint8 {
	rng := rand.New(rand.NewPCG(uint64(round), uint64(n)))
	v := make([]uint8, n)
	for i := range v {
		v[i] = uint8(rng.UintN(16))
	}
	return v
}

func TestNANDAndFriends(t *testing.T) {
	for _, n := range sizes {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			iters := rounds(n, 500)
			err := emulate.Run(n, papers.Config{}, func(p *papers.PE) error {
				for r := 0; r < iters; r++ {
					v := contributions(r, n)
					and, or := uint8(0xf), uint8(0)
					var vote peset.Set
					for i, x := range v {
						and &= x
						or |= x
						if x&1 != 0 {
							vote |= 1 << i
						}
					}
					x := v[p.Self()]
					got, err := p.NAND(x)
					if err != nil {
						return err
					}
					if want := ^and & 0xf; got != want {
						return fmt.Errorf("round %d: NAND of %v = %#x, want %#x", r, v, got, want)
					}
					if got, err = p.OR4(x); err != nil || got != or {
						return fmt.Errorf("round %d: OR4 of %v = %#x (%v), want %#x", r, v, got, err, or)
					}
					if got, err = p.AND4(x); err != nil || got != and {
						return fmt.Errorf("round %d: AND4 of %v = %#x (%v), want %#x", r, v, got, err, and)
					}
					anyb, err := p.Any(x&1 != 0)
					if err != nil || anyb != (vote != 0) {
						return fmt.Errorf("round %d: Any = %v (%v), want %v", r, anyb, err, vote != 0)
					}
					allb, err := p.All(x&1 != 0)
					if err != nil || allb != (vote == 1<<n-1) {
						return fmt.Errorf("round %d: All = %v (%v), want %v", r, allb, err, vote == 1<<n-1)
					}
					mask, err := p.Vote(x&1 != 0)
					if err != nil || mask != vote {
						return fmt.Errorf("round %d: Vote = %b (%v), want %b", r, mask, err, vote)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestDataFirstMode(t *testing.T) {
	err := emulate.Run(4, papers.Config{NANDMode: papers.DataFirst}, func(p *papers.PE) error {
		for r := 0; r < 200; r++ {
			v := contributions(r, 4)
			got, err := p.NAND(v[p.Self()])
			if err != nil {
				return err
			}
			if want := ^(v[0] & v[1] & v[2] & v[3]) & 0xf; got != want {
				return fmt.Errorf("round %d: NAND = %#x, want %#x", r, got, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// lastPort makes one PE certainly the last to arrive at every barrier: before
// each strobe flip it waits until the board shows every other PE's strobes
// already at the new phase. Its operations then take the fast path.
type lastPort struct {
	*emu.Port
	board *emu.Board
	n     int
	on    *atomic.Bool // from Open's return on
}

func (l lastPort) WriteData(v uint8) {
	if !l.on.Load() { // check-in's acknowledge writes more than strobe flips
		l.Port.WriteData(v)
		return
	}
	for k := 0; k < l.n; k++ {
		for k != l.PE() {
			s0, _ := l.board.NetLevel(fmt.Sprintf("PE%d.D6", k))
			s1, _ := l.board.NetLevel(fmt.Sprintf("PE%d.D7", k))
			if s0 == (v&lpt.S0 != 0) && s1 == (v&lpt.S1 != 0) {
				break
			}
			runtime.Gosched()
		}
	}
	l.Port.WriteData(v)
}

// TestPortOperationCounts asserts the seed's costs: a barrier is 2 port
// operations and a NAND 5 for a PE that is not kept waiting.
func TestPortOperationCounts(t *testing.T) {
	for _, n := range []int{1, 2, 4, 8} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			b, err := emu.New(n)
			if err != nil {
				t.Fatal(err)
			}
			const last = 0
			var barrierOps, nandOps []uint64
			var on atomic.Bool
			err = runOn(b, n, papers.Config{}, func(k int, port *emu.Port) lpt.Port {
				if k == last {
					return lastPort{port, b, n, &on}
				}
				return port
			}, func(p *papers.PE) error {
				if p.Self() == last {
					on.Store(true)
				}
				for i := 0; i < 3; i++ {
					before := portOps(p)
					if err := p.Barrier(); err != nil {
						return err
					}
					mid := portOps(p)
					if _, err := p.NAND(uint8(i)); err != nil {
						return err
					}
					if p.Self() == last {
						barrierOps = append(barrierOps, mid-before)
						nandOps = append(nandOps, portOps(p)-mid)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for i := range barrierOps {
				if barrierOps[i] != 2 || nandOps[i] != 5 {
					t.Errorf("iteration %d: barrier took %d port operations, NAND %d; want 2 and 5", i, barrierOps[i], nandOps[i])
				}
			}
		})
	}
}

func portOps(p *papers.PE) uint64 {
	switch port := p.Port().(type) {
	case *emu.Port:
		return port.Ops()
	case lastPort:
		return port.Ops()
	}
	panic("unknown port")
}

// runOn is emulate.RunOn with a hook to wrap each PE's port.
func runOn(b *emu.Board, n int, cfg papers.Config, wrap func(int, *emu.Port) lpt.Port, fn func(*papers.PE) error) error {
	return emulate.RunPorts(context.Background(), b, n, func(ctx context.Context, k int, port *emu.Port) error {
		c := cfg
		c.PE, c.PEs, c.Context = k, n, ctx
		p, err := papers.Open(wrap(k, port), c)
		if err != nil {
			return err
		}
		defer p.Close()
		return fn(p)
	})
}

func TestInterrupt(t *testing.T) {
	for _, n := range []int{2, 4, 8, 16} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			raiser := n - 1
			const code = 0xa
			err := emulate.Run(n, papers.Config{Timeout: 5 * time.Second}, func(p *papers.PE) error {
				if p.Self() == raiser {
					got, err := p.Interrupt(code)
					if err != nil {
						return err
					}
					if got != code {
						return fmt.Errorf("raiser got code %#x, want %#x", got, code)
					}
				} else if err := barriersUntilInterrupt(p, code); err != nil {
					return err
				}
				if p.Stats().Interrupts != 1 {
					return fmt.Errorf("acknowledged %d interrupts, want 1", p.Stats().Interrupts)
				}
				if err := p.CheckInterrupt(); err != nil {
					return err
				}
				// The cluster is back in step: a NAND gives the right answer.
				got, err := p.NAND(uint8(p.Self() & 0xf))
				if err != nil {
					return err
				}
				want := uint8(0xf)
				for i := 0; i < n; i++ {
					want &= uint8(i & 0xf)
				}
				if want = ^want & 0xf; got != want {
					return fmt.Errorf("NAND after interrupt = %#x, want %#x", got, want)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// barriersUntilInterrupt runs barriers until one returns the interrupt.
func barriersUntilInterrupt(p *papers.PE, code uint8) error {
	for i := 0; i < 1_000_000; i++ {
		err := p.Barrier()
		var ie *papers.InterruptError
		if errors.As(err, &ie) {
			if ie.Code != code {
				return fmt.Errorf("delivered code %#x, want %#x", ie.Code, code)
			}
			return nil
		}
		if err != nil {
			return err
		}
	}
	return errors.New("interrupt never arrived")
}

// TestTransparentAndUnplugged: a PE that leaves (0xcf, announced by an
// interrupt naming it) and a PE whose cable is unplugged take no part; a PE
// that rejoins takes part again, announced the same way.
func TestTransparentAndUnplugged(t *testing.T) {
	b, err := emu.New(4)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Inject(emu.Fault{PE: 3, Kind: emu.Unplugged}); err != nil {
		t.Fatal(err)
	}
	soloDone := make(chan struct{}, 2)
	err = emulate.RunOn(b, 3, papers.Config{Timeout: 5 * time.Second}, func(p *papers.PE) error {
		if p.Self() == 2 {
			return leaveAndRejoin(p, soloDone)
		}
		ie, err := untilInterrupt(p)
		if err != nil {
			return err
		}
		if ie.Left != 1<<2 || p.Participants() != 0b011 {
			return fmt.Errorf("Leave seen as %+v, participants %b", ie, p.Participants())
		}
		for i := 0; i < 100; i++ {
			if err := p.Barrier(); err != nil {
				return err
			}
		}
		got, err := p.NAND(uint8(p.Self()) + 1) // 1 and 2
		if err != nil {
			return err
		}
		if got != ^uint8(1&2)&0xf {
			return fmt.Errorf("NAND without PEs 2 and 3 = %#x, want %#x", got, ^uint8(1&2)&0xf)
		}
		if m, err := p.Vote(true); err != nil || m != 0b011 {
			return fmt.Errorf("vote without PEs 2 and 3 = %b (%v), want 11", m, err)
		}
		soloDone <- struct{}{}
		// PE 2's rejoin reaches the others as an interrupt too.
		if ie, err = untilInterrupt(p); err != nil || ie.Code != 5 || ie.Joined != 1<<2 {
			return fmt.Errorf("Rejoin seen as %+v, %v; want code 5 and PE 2 joined", ie, err)
		}
		if m, err := p.Vote(true); err != nil || m != 0b111 || p.Participants() != 0b111 {
			return fmt.Errorf("vote after rejoin = %b (%v), participants %b, want 111", m, err, p.Participants())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if c := b.Contention(); c != 0 {
		t.Fatalf("%d tri-state contentions on the board", c)
	}
}

// leaveAndRejoin is PE 2 of TestTransparentAndUnplugged.
func leaveAndRejoin(p *papers.PE, soloDone chan struct{}) error {
	if err := p.Leave(); err != nil {
		return err
	}
	if err := p.Barrier(); !errors.Is(err, papers.ErrLeft) {
		return fmt.Errorf("barrier after Leave: %v, want ErrLeft", err)
	}
	<-soloDone // the others run without us
	<-soloDone
	if code, err := p.Rejoin(5); err != nil || code != 5 {
		return fmt.Errorf("Rejoin = %#x, %v", code, err)
	}
	if m, err := p.Vote(true); err != nil || m != 0b111 || p.Participants() != 0b111 {
		return fmt.Errorf("vote after rejoin = %b (%v), participants %b, want 111", m, err, p.Participants())
	}
	return nil
}

// TestStalledPE: a PE holding S1=S0=0 stalls every barrier; the others get a
// deadline error that names it.
func TestStalledPE(t *testing.T) {
	const n = 4
	timedOut := make(chan struct{}, n-1)
	err := emulate.Run(n, papers.Config{Timeout: 200 * time.Millisecond}, func(p *papers.PE) error {
		if p.Self() == 3 {
			p.Port().WriteData(0) // both strobes low
			for range n - 1 {     // hold until every other PE has timed out
				<-timedOut
			}
			return nil
		}
		err := p.Barrier()
		timedOut <- struct{}{}
		var te *papers.TimeoutError
		if !errors.As(err, &te) {
			return fmt.Errorf("barrier with a stalled PE returned %v, want a TimeoutError", err)
		}
		if !strings.Contains(err.Error(), "PE 3 holds S0=S1=0") {
			return fmt.Errorf("timeout error does not name the stalled PE: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSplitPhaseBarrier runs the Strata manual's sequences on the papers
// split-phase barrier: QueryBarrier "returns true if and only if the last
// barrier has completed" — false while a PE is missing, then true, and true
// again when asked again; CompleteBarrier "returns when the last barrier
// has completed", whether or not Query saw it, and at once when it has.
func TestSplitPhaseBarrier(t *testing.T) {
	queried := make(chan struct{})
	err := emulate.Run(2, papers.Config{}, func(p *papers.PE) error {
		if p.Self() == 1 {
			<-queried // late: PE 0 has seen the barrier incomplete
			for range 3 {
				if err := p.Barrier(); err != nil {
					return err
				}
			}
			return nil
		}
		if err := splitSequences(p, queried); err != nil {
			return err
		}
		return p.Barrier() // in step: PE 1's third barrier
	})
	if err != nil {
		t.Fatal(err)
	}
}

// splitSequences is PE 0's part of TestSplitPhaseBarrier. That it runs on
// between StartBarrier and completion is shown by the first QueryBarrier,
// which must find PE 1 not arrived: after that PE 1 may arrive at once (it
// did, on a fast board), so the polls that follow need not see it pending.
func splitSequences(p *papers.PE, queried chan struct{}) error {
	// With no split-phase barrier begun, the last barrier has completed.
	if ok, err := p.QueryBarrier(); !ok || err != nil {
		return fmt.Errorf("QueryBarrier before any StartBarrier = %v, %v; want true", ok, err)
	}
	if err := p.CompleteBarrier(); err != nil {
		return fmt.Errorf("CompleteBarrier before any StartBarrier: %v", err)
	}
	// Start, Query until true, Query again, Complete.
	if err := p.StartBarrier(); err != nil {
		return err
	}
	if ok, err := p.QueryBarrier(); ok || err != nil {
		return fmt.Errorf("first QueryBarrier with PE 1 not arrived = %v, %v; want false", ok, err)
	}
	if err := p.Barrier(); !errors.Is(err, papers.ErrSplit) {
		return fmt.Errorf("Barrier during a split-phase barrier: %v, want ErrSplit", err)
	}
	close(queried)
	for {
		done, err := p.QueryBarrier()
		if err != nil {
			return err
		}
		if done {
			break
		}
	}
	if ok, err := p.QueryBarrier(); !ok || err != nil {
		return fmt.Errorf("QueryBarrier after it was true = %v, %v; want true", ok, err)
	}
	if err := p.CompleteBarrier(); err != nil {
		return fmt.Errorf("CompleteBarrier after QueryBarrier saw the barrier complete: %v", err)
	}
	// Start, Complete (blocking) without Query; then Query is true.
	if err := p.StartBarrier(); err != nil {
		return err
	}
	if err := p.CompleteBarrier(); err != nil {
		return err
	}
	if ok, err := p.QueryBarrier(); !ok || err != nil {
		return fmt.Errorf("QueryBarrier after CompleteBarrier = %v, %v; want true", ok, err)
	}
	return nil
}

// TestLED: the seed's colours. Green while running (Open), red while a
// barrier wait is slow, dark after Close; SetLED shows the program's colour,
// orange included, and the automatic red gives it back when the wait ends.
func TestLED(t *testing.T) {
	b, err := emu.New(2)
	if err != nil {
		t.Fatal(err)
	}
	waiting := make(chan papers.LED, 1)
	err = emulate.RunOn(b, 2, papers.Config{}, func(p *papers.PE) error {
		if p.Self() == 1 {
			if got := b.LED(1); got != lpt.Green {
				return fmt.Errorf("LED of a running PE is %v, want green", got)
			}
			for range 2 {
				colour := <-waiting
				if err := waitForLED(b, 0, lpt.Red); err != nil {
					return fmt.Errorf("PE 0 waiting with colour %v: %w", colour, err)
				}
				if err := p.Barrier(); err != nil {
					return err
				}
			}
			return nil
		}
		for _, c := range []papers.LED{papers.Green, papers.Orange} {
			if err := p.SetLED(c); err != nil {
				return err
			}
			if got := b.LED(0); got != lpt.LED(c) || p.LED() != c {
				return fmt.Errorf("SetLED(%v): the board shows %v, LED() %v", c, got, p.LED())
			}
			waiting <- c
			if err := p.Barrier(); err != nil {
				return err
			}
			if got := b.LED(0); got != lpt.LED(c) {
				return fmt.Errorf("LED after the wait is %v, want %v again", got, c)
			}
		}
		if err := p.SetLED(papers.LED(7)); !errors.Is(err, papers.ErrArgument) {
			return fmt.Errorf("SetLED(7) = %v, want ErrArgument", err)
		}
		return p.SetLED(papers.Dark)
	})
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 2; k++ {
		if got := b.LED(k); got != lpt.Dark {
			t.Errorf("LED of PE %d after Close is %v, want dark", k, got)
		}
	}
}

// waitForLED waits (up to 10 s) until PE k's LED shows c.
func waitForLED(b *emu.Board, k int, c lpt.LED) error {
	for deadline := time.Now().Add(10 * time.Second); b.LED(k) != c; {
		if time.Now().After(deadline) {
			return fmt.Errorf("PE %d's LED is %v after 10s, want %v", k, b.LED(k), c)
		}
		runtime.Gosched()
	}
	return nil
}

// TestErrorsFollowTheStandardLibrary: one "papers: PE k:" per message;
// timeouts are os.ErrDeadlineExceeded with Timeout(); sentinels wrap; a
// wait abandoned by the context wraps its cause.
func TestErrorsFollowTheStandardLibrary(t *testing.T) {
	b, err := emu.New(2)
	if err != nil {
		t.Fatal(err)
	}
	port, err := b.Port(0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = papers.Open(port, papers.Config{PE: 0, PEs: 2, Timeout: 20 * time.Millisecond}) // PE 1 never comes
	var te *papers.TimeoutError
	if !errors.As(err, &te) || !te.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) || te.Op != "check-in" {
		t.Errorf("check-in without PE 1: %v; want a check-in TimeoutError matching os.ErrDeadlineExceeded", err)
	}
	if n := strings.Count(err.Error(), "papers: PE 0"); n != 1 {
		t.Errorf("%q names the package and PE %d times, want once", err, n)
	}
	stop := errors.New("stop now")
	ctx, cancel := context.WithCancelCause(context.Background())
	err = emulate.Run(2, papers.Config{Context: ctx}, func(p *papers.PE) error {
		if p.Self() == 1 {
			return p.Close() // PE 0's next barrier waits for nobody
		}
		go func() { cancel(stop) }()
		err := p.Barrier()
		if !errors.Is(err, stop) || strings.Count(err.Error(), "papers: PE 0") != 1 {
			return fmt.Errorf("barrier abandoned by the context: %v; want one that wraps the cause", err)
		}
		p.Close()
		err = p.Barrier()
		if !errors.Is(err, papers.ErrClosed) || err.Error() != "papers: PE 0: barrier: "+papers.ErrClosed.Error() {
			return fmt.Errorf("barrier after Close: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestBadInput(t *testing.T) {
	b, err := emu.New(4)
	if err != nil {
		t.Fatal(err)
	}
	port, err := b.Port(0)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		cfg  papers.Config
		want string
	}{
		{papers.Config{PE: 4, PEs: 4}, "PE id 4 out of range"},
		{papers.Config{PE: -1, PEs: 4}, "PE id -1 out of range"},
		{papers.Config{PE: 0, PEs: 33}, "33 PEs: a TTL_PAPERS board connects 1 to 32"},
		{papers.Config{PE: 0, PEs: 0}, "0 PEs: a TTL_PAPERS board connects 1 to 32"},
		{papers.Config{PE: 0, PEs: 4, CheckInTimeout: -time.Second}, "negative timeout"},
	}
	for _, c := range cases {
		if _, err := papers.Open(port, c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Open(%+v) = %v, want an error containing %q", c.cfg, err, c.want)
		}
	}
	if _, err := b.Port(0); err == nil || !strings.Contains(err.Error(), "already open") {
		t.Errorf("second Port(0) = %v, want 'already open'", err)
	}
	port.Close()
	if _, err := emu.New(33); err == nil {
		t.Error("emu.New(33) succeeded")
	}

	err = emulate.Run(1, papers.Config{}, func(p *papers.PE) error {
		if _, err := p.NAND(0x10); err == nil || !strings.Contains(err.Error(), "wider than 4 bits") {
			return fmt.Errorf("NAND(0x10) = %v, want 'wider than 4 bits'", err)
		}
		if _, err := p.Interrupt(0x1f); err == nil {
			return errors.New("Interrupt(0x1f) succeeded")
		}
		if err := p.Close(); err != nil {
			return err
		}
		if err := p.Barrier(); !errors.Is(err, papers.ErrClosed) {
			return fmt.Errorf("Barrier after Close = %v, want ErrClosed", err)
		}
		if _, err := p.NAND(1); !errors.Is(err, papers.ErrClosed) {
			return fmt.Errorf("NAND after Close = %v, want ErrClosed", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCheckInFindsMissingPE: a program started for 4 PEs with a cable
// unplugged fails on every PE at CheckInTimeout, naming the missing one and
// both causes (not started, unplugged).
func TestCheckInFindsMissingPE(t *testing.T) {
	b, err := emu.New(4)
	if err != nil {
		t.Fatal(err)
	}
	b.Inject(emu.Fault{PE: 2, Kind: emu.Unplugged})
	err = emulate.RunOn(b, 4, papers.Config{Timeout: time.Second}, func(p *papers.PE) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "PE 2 did not answer: its program was not started") || !strings.Contains(err.Error(), "its cable is unplugged") {
		t.Fatalf("check-in with PE 2 unplugged: %v", err)
	}
	if te, ok := errors.AsType[*papers.TimeoutError](err); !ok || te.Missing != 1<<2 {
		t.Errorf("check-in with PE 2 unplugged: %v: its TimeoutError's Missing is not PE 2", err)
	}
}

// TestCheckInTimeout: CheckInTimeout, not Timeout, bounds Open's wait for a
// PE that starts late — without one, a short Timeout still gives the
// check-in MinCheckIn — and the waits after Open are bounded by Timeout
// again.
func TestCheckInTimeout(t *testing.T) {
	const short, late, tooShort = 50 * time.Millisecond, 400 * time.Millisecond, 100 * time.Millisecond
	if late >= papers.MinCheckIn {
		t.Fatalf("PE 1 comes %v late, past MinCheckIn %v", late, papers.MinCheckIn)
	}
	for _, checkIn := range []time.Duration{tooShort, 0, 20 * time.Second} {
		b, err := emu.New(2)
		if err != nil {
			t.Fatal(err)
		}
		errs := make([]error, 2)
		emulate.RunPorts(context.Background(), b, 2, func(ctx context.Context, k int, port *emu.Port) error {
			if k == 1 {
				time.Sleep(late)
			}
			p, err := papers.Open(port, papers.Config{PE: k, PEs: 2, Timeout: short, CheckInTimeout: checkIn, Context: ctx})
			if err != nil {
				errs[k] = err
				return nil
			}
			defer p.Close()
			if k == 0 {
				errs[k] = p.Barrier() // PE 1 never comes: Timeout, not CheckInTimeout
			}
			return nil
		})
		var te *papers.TimeoutError
		if checkIn == tooShort {
			if !errors.As(errs[0], &te) || te.Waited != tooShort || !strings.Contains(errs[0].Error(), "check-in") {
				t.Errorf("CheckInTimeout %v, PE 1 %v late: PE 0's Open = %v, want a check-in timeout after %v", checkIn, late, errs[0], tooShort)
			}
			continue
		}
		if errs[1] != nil {
			t.Errorf("CheckInTimeout %v, PE 1 %v late: PE 1's Open = %v", checkIn, late, errs[1])
		}
		if !errors.As(errs[0], &te) || te.Waited != short || te.Op != "barrier" {
			t.Errorf("CheckInTimeout %v: PE 0's barrier without PE 1 = %v, want a barrier timeout after %v", checkIn, errs[0], short)
		}
	}
}

// TestNoAllocations: the operation hot paths do not allocate.
func TestNoAllocations(t *testing.T) {
	const runs = 200
	ops := map[string]func(p *papers.PE) error{
		"barrier": func(p *papers.PE) error { return p.Barrier() },
		"nand":    func(p *papers.PE) error { _, err := p.NAND(3); return err },
		"vote":    func(p *papers.PE) error { _, err := p.Vote(true); return err },
	}
	for name, op := range ops {
		var allocs float64
		err := emulate.Run(2, papers.Config{}, func(p *papers.PE) error {
			var err error
			f := func() {
				if e := op(p); e != nil {
					err = e
				}
			}
			if p.Self() == 0 {
				allocs = testing.AllocsPerRun(runs, f)
			} else {
				for i := 0; i <= runs; i++ {
					f()
				}
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if allocs != 0 {
			t.Errorf("%s: %v allocations per operation, want 0", name, allocs)
		}
	}
}
