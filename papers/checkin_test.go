package papers_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/papers"
)

// leftover is a board state an earlier run can leave on a PE's port.
type leftover struct {
	name          string
	data, control uint8
}

var leftovers = []leftover{
	{"power-on", 0, 0},
	{"parked (Close)", 0, 0},
	{"transparent (Leave, Abort, a signal)", lpt.Transparent, 0},
	{"killed mid-barrier at S0, P_NAK high", lpt.S0 | lpt.LR | 0x5, lpt.NAK},
	{"killed mid-barrier at S1, P_NAK high", lpt.S1 | lpt.LR | 0xa, lpt.NAK},
	{"killed while raising", lpt.DataMask | lpt.LG, lpt.NAK | lpt.IRQ},
	{"stalled (Leave unacknowledged)", lpt.LR | lpt.DataMask, 0},
}

// TestCheckInAfterAnyRun: whatever an earlier run left on the ports — a mix
// of every leftover state, a latched interrupt — the next run's PEs, started
// together or one by one, check in, agree on every NAND and see no stale
// interrupt.
func TestCheckInAfterAnyRun(t *testing.T) {
	const n = 4
	for trial := range 2 * len(leftovers) {
		stagger := trial%2 == 1
		t.Run(fmt.Sprintf("%d/stagger=%v", trial, stagger), func(t *testing.T) {
			b, err := emu.New(n)
			if err != nil {
				t.Fatal(err)
			}
			// An earlier run's survivors raised an interrupt that a killed
			// PE never acknowledged: the flag stays latched.
			if err := setPorts(b, n, func(k int) leftover { return leftovers[(trial/2+k)%len(leftovers)] }, trial%3 == 0); err != nil {
				t.Fatal(err)
			}
			err = emulate.RunPorts(context.Background(), b, n, func(ctx context.Context, k int, port *emu.Port) error {
				if stagger {
					time.Sleep(time.Duration(k) * 150 * time.Millisecond)
				}
				p, err := papers.Open(port, papers.Config{PE: k, PEs: n, Timeout: time.Second, CheckInTimeout: 20 * time.Second, Context: ctx})
				if err != nil {
					return err
				}
				defer p.Close()
				if err := p.CheckInterrupt(); err != nil {
					return fmt.Errorf("after check-in: %w", err)
				}
				for i := range 3 {
					r, err := p.NAND(uint8(k+i) & lpt.DataMask)
					if err != nil {
						return err
					}
					var want uint8 = lpt.DataMask
					for j := range n {
						want &= uint8(j+i) & lpt.DataMask
					}
					if want = ^want & lpt.DataMask; r != want {
						return fmt.Errorf("NAND %d = %#x, want %#x", i, r, want)
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

// setPorts leaves each PE's port as state(k) says, with the interrupt flag
// latched if latch.
func setPorts(b *emu.Board, n int, state func(k int) leftover, latch bool) error {
	ports := make([]*emu.Port, n)
	for k := range n {
		p, err := b.Port(k)
		if err != nil {
			return err
		}
		ports[k] = p
		p.WriteControl(lpt.NAK)
	}
	if latch {
		ports[0].WriteControl(lpt.NAK | lpt.IRQ)
		ports[0].WriteControl(lpt.NAK)
	}
	for k, p := range ports {
		s := state(k)
		p.WriteData(s.data)
		p.WriteControl(s.control)
		if err := p.Close(); err != nil {
			return err
		}
	}
	return nil
}

// TestCheckInNamesAbsentPE: a PE whose port an earlier run left transparent
// and whose program never starts is named at CheckInTimeout, with both
// causes, by every PE that came.
func TestCheckInNamesAbsentPE(t *testing.T) {
	const n = 3
	b, err := emu.New(n)
	if err != nil {
		t.Fatal(err)
	}
	if err := setPorts(b, n, func(int) leftover { return leftovers[2] }, false); err != nil {
		t.Fatal(err)
	}
	errs := make([]error, n)
	emulate.RunPorts(context.Background(), b, n-1, func(ctx context.Context, k int, port *emu.Port) error {
		_, errs[k] = papers.Open(port, papers.Config{PE: k, PEs: n, CheckInTimeout: 2 * time.Second, Context: ctx}) // at load 30, 300 ms did not let PEs 0 and 1 meet
		return nil
	})
	for k := range n - 1 {
		var te *papers.TimeoutError
		if !errors.As(errs[k], &te) || te.Op != "check-in" || !contains(errs[k], "PE 2 did not answer", "not started", "cable is unplugged") {
			t.Errorf("PE %d: %v; want a check-in timeout naming PE 2, not started or unplugged", k, errs[k])
		}
	}
}

// TestCheckInTestsLines: a data line stuck at 1 on one PE is named with
// its PE and DB-25 pin; one stuck at 0 is named with its pin and the PEs it
// may be on. No PE's Open succeeds, so no NAND gives a wrong answer.
func TestCheckInTestsLines(t *testing.T) {
	const n = 4
	for _, c := range []struct {
		fault  string
		faulty int
		pin    int
		stuck  uint8
	}{
		{"PE1.D3=stuck1", 1, 5, 1},
		{"PE2.D0=stuck1", 2, 2, 1},
		{"PE1.D3=stuck0", -1, 5, 0},
		{"PE3.D1=stuck0", -1, 3, 0},
	} {
		b, err := emu.New(n)
		if err != nil {
			t.Fatal(err)
		}
		f, err := emu.ParseFault(c.fault)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Inject(f); err != nil {
			t.Fatal(err)
		}
		errs := openAll(b, n, func(k int) papers.Config {
			return papers.Config{PE: k, PEs: n, Timeout: time.Second, CheckInTimeout: 5 * time.Second}
		})
		for k, err := range errs {
			var le *papers.LineError
			if !errors.As(err, &le) || le.Faulty != c.faulty || le.Line.Pin != c.pin || le.Stuck != c.stuck || c.faulty < 0 && le.Candidates != 1<<n-1 {
				t.Errorf("%s: PE %d: %v; want a LineError naming PE %d, pin %d stuck at %d", c.fault, k, err, c.faulty, c.pin, c.stuck)
			}
		}
	}
}

// openAll opens n PEs on b's ports, PE k's with cfg(k) (its Context
// filled in), closes those that opened, and returns each Open's error.
func openAll(b *emu.Board, n int, cfg func(k int) papers.Config) []error {
	errs := make([]error, n)
	emulate.RunPorts(context.Background(), b, n, func(ctx context.Context, k int, port *emu.Port) error {
		c := cfg(k)
		c.Context = ctx
		p, err := papers.Open(port, c)
		if err == nil {
			p.Close()
		}
		errs[k] = err
		return nil
	})
	return errs
}

func contains(err error, subs ...string) bool {
	if err == nil {
		return false
	}
	for _, s := range subs {
		if !strings.Contains(err.Error(), s) {
			return false
		}
	}
	return true
}

// TestCheckInSessions: PEs that run several programs one after another on
// the same ports, each PE re-opening as soon as it closed (one started late
// at first), check in to each in step: no arrival's interrupt reaches a PE
// still in the program before.
func TestCheckInSessions(t *testing.T) {
	const n, sessions = 4, 4
	b, err := emu.New(n)
	if err != nil {
		t.Fatal(err)
	}
	err = emulate.RunPorts(context.Background(), b, n, func(ctx context.Context, k int, port *emu.Port) error {
		if k == n-1 {
			time.Sleep(300 * time.Millisecond)
		}
		for s := range sessions {
			p, err := papers.Open(port, papers.Config{PE: k, PEs: n, Timeout: time.Second, CheckInTimeout: 20 * time.Second, Context: ctx})
			if err != nil {
				return fmt.Errorf("session %d: %w", s, err)
			}
			for i := range 20 {
				if _, err := p.NAND(uint8(k+i) & lpt.DataMask); err != nil {
					p.Close()
					return fmt.Errorf("session %d, NAND %d: %w", s, i, err)
				}
			}
			if k == s%n {
				time.Sleep(20 * time.Millisecond) // the others close and re-open first
			}
			if err := p.CheckInterrupt(); err != nil {
				p.Close()
				return fmt.Errorf("session %d: %w", s, err)
			}
			p.Close() // releases the port too: take it again at once
			if port, err = b.Port(k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRollCallNamesMissingPE: when a barrier times out, the PEs waiting at
// it name the one that is not — stopped mid-program, or returned from it
// (its port parked) — and never one of themselves.
func TestRollCallNamesMissingPE(t *testing.T) {
	const n, missing = 4, 2
	for _, how := range []string{"stopped", "returned"} {
		errs := make([]error, n)
		emulate.Run(n, papers.Config{Timeout: time.Second}, func(p *papers.PE) error {
			if err := p.Barrier(); err != nil {
				return err
			}
			if p.Self() == missing {
				if how == "stopped" {
					time.Sleep(2 * time.Second) // past the others' timeout and roll call
				}
				return p.Close() // parked, unannounced: not Finish, which the others are told of
			}
			errs[p.Self()] = p.Barrier()
			return nil
		})
		for k, err := range errs {
			if k == missing {
				continue
			}
			var te *papers.TimeoutError
			if !errors.As(err, &te) || !te.RollCall || te.Missing != 1<<missing {
				t.Errorf("%s PE %d: PE %d's barrier: %v; want a timeout whose roll call misses PE %d only (missing %s)", how, missing, k, err, missing, missingOf(te))
			}
		}
	}
}

func missingOf(te *papers.TimeoutError) string {
	if te == nil {
		return "no timeout"
	}
	return fmt.Sprintf("%v, roll call %v", te.Missing.Members(), te.RollCall)
}
