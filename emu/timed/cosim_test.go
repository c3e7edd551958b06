package timed_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/emu/timed"
	"github.com/ttlpapers/ttlpapers/emu/vcd"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/papers"
)

// runTimed runs fn on every port of a timed run, one goroutine per PE, and
// joins their errors.
func runTimed(t *testing.T, b *timed.Board, cfg timed.RunConfig, fn func(p *timed.Port) error) error {
	t.Helper()
	ports, err := b.Ports(cfg)
	if err != nil {
		t.Fatal(err)
	}
	errs := make([]error, len(ports))
	var wg sync.WaitGroup
	for k, p := range ports {
		wg.Go(func() {
			defer p.Close()
			if err := fn(p); err != nil {
				errs[k] = fmt.Errorf("PE %d: %w", k, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// program is a PAPERS program for the timed tests: check-in, barriers,
// NANDs of random contributions checked against the true NAND, and a
// parallel interrupt from PE 0 that the others find with CheckInterrupt.
// It returns each PE's operation count and final clock.
func program(t *testing.T, b *timed.Board, cfg timed.RunConfig) []string {
	t.Helper()
	const nands = 6
	n := 4
	contrib := make([][nands]uint8, n)
	rng := rand.New(rand.NewPCG(cfg.Seed, 99))
	for k := range contrib {
		for i := range nands {
			contrib[k][i] = uint8(rng.IntN(16))
		}
	}
	trace := make([]string, n)
	err := runTimed(t, b, cfg, func(port *timed.Port) error {
		k := port.PE()
		p, err := papers.Open(port, papers.Config{PE: k, PEs: n, Timeout: time.Minute, FreshBoard: true})
		if err != nil {
			return err
		}
		defer p.Close()
		for range 3 {
			if err := p.Barrier(); err != nil {
				return err
			}
		}
		for i := range nands {
			got, err := p.NAND(contrib[k][i])
			if err != nil {
				return err
			}
			want := uint8(lpt.DataMask)
			for j := range n {
				want &= contrib[j][i]
			}
			if want = ^want & lpt.DataMask; got != want {
				return fmt.Errorf("NAND %d: got %#x, want %#x", i, got, want)
			}
		}
		if err := interruptFromPE0(p); err != nil {
			return err
		}
		if err := p.Barrier(); err != nil {
			return err
		}
		trace[k] = fmt.Sprintf("PE %d: %d ops, done at %v", k, port.Ops(), port.Now())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return trace
}

// interruptFromPE0 raises interrupt 0x5 on PE 0; the others poll
// CheckInterrupt until they have it.
func interruptFromPE0(p *papers.PE) error {
	if p.Self() == 0 {
		if code, err := p.Interrupt(0x5); err != nil || code != 0x5 {
			return fmt.Errorf("Interrupt: code %#x, %v", code, err)
		}
		return nil
	}
	var ie *papers.InterruptError
	for tries := 0; ; tries++ {
		if tries == 1000 {
			return errors.New("no interrupt seen in 1000 checks")
		}
		if err := p.CheckInterrupt(); errors.As(err, &ie) {
			break
		} else if err != nil {
			return err
		}
	}
	if ie.Code != 0x5 {
		return fmt.Errorf("interrupt code %#x, want 0x5", ie.Code)
	}
	return nil
}

// TestTimedRunsDriver runs the real driver on timed boards from every
// power-up state of the two flip-flops, with every gate's delay drawn at
// random, on the seed's ISA ports and on fast PCIe ones, both with 10-foot
// cables: check-in, barrier, NAND and interrupt all work, and the same
// seeds give the same run operation for operation. (On PCIe the status read
// after CheckInterrupt raises the slow open-collector P_SEL line can still
// show the ready flag: the driver confirms a set interrupt bit with more
// reads, docs/timing.md.)
func TestTimedRunsDriver(t *testing.T) {
	for _, c := range []struct {
		timing timed.PortTiming
		metres float64
	}{{timed.ISA, timed.TenFeet}, {timed.PCIe, timed.TenFeet}} {
		timing := c.timing
		for state := range 4 {
			up := []bool{state&1 != 0, state&2 != 0}
			run := func() []string {
				b, err := timed.New(timed.Config{PEs: 4, Delays: timed.Spread, Cable: timed.Cable{Metres: []float64{c.metres}, Skew: 2 * time.Nanosecond}, PowerUp: up, Seed: uint64(state)})
				if err != nil {
					t.Fatal(err)
				}
				cfg := timed.RunConfig{Timing: timing, Speed: []float64{1, 1.1, 0.9, 1.05}, Start: []time.Duration{0, 3 * time.Microsecond}, Seed: uint64(state)}
				return program(t, b, cfg)
			}
			a, b := run(), run()
			if strings.Join(a, "\n") != strings.Join(b, "\n") {
				t.Errorf("%s, power-up %v: two runs with the same seeds differ:\n%s\nthen\n%s", timing.Name, up, strings.Join(a, "\n"), strings.Join(b, "\n"))
			}
		}
	}
}

// TestTimedPortsErrors checks that bad run settings are refused with an
// error that names them.
func TestTimedPortsErrors(t *testing.T) {
	for _, c := range []struct {
		cfg  timed.RunConfig
		want string
	}{
		{timed.RunConfig{PEs: 5, Timing: timed.ISA}, "5 PEs"},
		{timed.RunConfig{Timing: timed.PortTiming{Name: "x"}}, "some time"},
		{timed.RunConfig{Timing: timed.ISA, Speed: []float64{1, 0}}, "speed factor 0"},
		{timed.RunConfig{Timing: timed.ISA, Start: []time.Duration{-1}}, "start -1ns"},
		{timed.RunConfig{Timing: timed.PortTiming{Name: "j", Op: 1, Jitter: 1}}, "jitter"},
		{timed.RunConfig{Timing: timed.PortTiming{Name: "s", Op: 1, StallMin: 2, StallMax: 1}}, "stalls"},
	} {
		b, err := timed.New(timed.Config{PEs: 4})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.Ports(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one about %q", c.cfg, err, c.want)
		}
	}
	b, _ := timed.New(timed.Config{PEs: 4})
	if _, err := b.Ports(timed.RunConfig{Timing: timed.ISA}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Ports(timed.RunConfig{Timing: timed.ISA}); err == nil {
		t.Error("a second run on one timed board accepted")
	}
	for _, cfg := range []timed.Config{
		{PEs: 0}, {PEs: 33}, {PEs: 4, Cable: timed.Cable{Metres: []float64{1, 2}}},
		{PEs: 4, Cable: timed.Cable{Metres: []float64{-1}}}, {PEs: 4, Cable: timed.Cable{Skew: -1}},
	} {
		if _, err := timed.New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}

// TestTimedVCD records a timed run and reads it back: the status register
// the file shows after each read is what the PE read, PC-side lines lag
// the board's by the cable, and times are in nanoseconds.
func TestTimedVCD(t *testing.T) {
	b, err := timed.New(timed.Config{PEs: 2, Cable: timed.Cable{Metres: []float64{2}}, PowerUp: []bool{false, false}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	rec, err := b.RecordVCD(&buf)
	if err != nil {
		t.Fatal(err)
	}
	type read struct {
		at time.Duration
		v  uint8
	}
	reads := make([][]read, 2)
	err = runTimed(t, b, timed.RunConfig{Timing: timed.ISA}, func(port *timed.Port) error {
		// Without the line test, whose last NANDs are still settling on the
		// status lines when these reads sample them.
		p, err := papers.Open(port, papers.Config{PE: port.PE(), PEs: 2, FreshBoard: true, NoLineTest: true})
		if err != nil {
			return err
		}
		reads[port.PE()] = append(reads[port.PE()], read{port.Now(), port.ReadStatus()})
		port.ReadStatus()
		reads[port.PE()] = append(reads[port.PE()], read{port.Now(), port.ReadStatus()})
		return p.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := vcd.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if f.Timescale != time.Nanosecond {
		t.Errorf("timescale %v, want 1ns", f.Timescale)
	}
	for k, rs := range reads {
		st := f.Signal(fmt.Sprintf("pc.PE%d.status", k))
		if st == nil {
			t.Fatalf("no pc.PE%d.status in the file", k)
		}
		for _, r := range rs {
			if v, ok := st.Uint(int64(r.at)); !ok || uint8(v) != r.v {
				t.Errorf("PE %d read %#02x at %v; the file shows %s", k, r.v, r.at, st.At(int64(r.at)))
			}
		}
	}
	board, pc := f.Signal("board.PE0.D6"), f.Signal("pc.PE0.D6")
	if board == nil || pc == nil || len(board.Changes) < 2 || len(pc.Changes) != len(board.Changes) {
		t.Fatalf("PE 0's D6 at the board and at the PC: %v, %v", board, pc)
	}
	lag := time.Duration(board.Changes[1].T-pc.Changes[1].T) * f.Timescale
	want := 2*timed.DefaultWire.Propagation + timed.DefaultWire.Edge // 2 m, half of a 2 m edge
	if lag != want {
		t.Errorf("D6 reached the board %v after the PC drove it, want %v", lag, want)
	}
}
