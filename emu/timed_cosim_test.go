package emu_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/emu/vcd"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/papers"
)

// runTimed runs fn on every port of a timed run, one goroutine per PE, and
// joins their errors.
func runTimed(t *testing.T, b *emu.TimedBoard, cfg emu.RunConfig, fn func(p *emu.TimedPort) error) error {
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
func program(t *testing.T, b *emu.TimedBoard, cfg emu.RunConfig) []string {
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
	err := runTimed(t, b, cfg, func(port *emu.TimedPort) error {
		k := port.PE()
		p, err := papers.Open(port, papers.Config{PE: k, PEs: n, Timeout: time.Minute})
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
		timing emu.PortTiming
		metres float64
	}{{emu.ISA, emu.TenFeet}, {emu.PCIe, emu.TenFeet}} {
		timing := c.timing
		for state := range 4 {
			up := []bool{state&1 != 0, state&2 != 0}
			run := func() []string {
				b, err := emu.NewTimed(emu.TimedConfig{PEs: 4, Delays: emu.Spread, Cable: emu.Cable{Metres: []float64{c.metres}, Skew: 2 * time.Nanosecond}, PowerUp: up, Seed: uint64(state)})
				if err != nil {
					t.Fatal(err)
				}
				cfg := emu.RunConfig{Timing: timing, Speed: []float64{1, 1.1, 0.9, 1.05}, Start: []time.Duration{0, 3 * time.Microsecond}, Seed: uint64(state)}
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
		cfg  emu.RunConfig
		want string
	}{
		{emu.RunConfig{PEs: 5, Timing: emu.ISA}, "5 PEs"},
		{emu.RunConfig{Timing: emu.PortTiming{Name: "x"}}, "some time"},
		{emu.RunConfig{Timing: emu.ISA, Speed: []float64{1, 0}}, "speed factor 0"},
		{emu.RunConfig{Timing: emu.ISA, Start: []time.Duration{-1}}, "start -1ns"},
		{emu.RunConfig{Timing: emu.PortTiming{Name: "j", Op: 1, Jitter: 1}}, "jitter"},
		{emu.RunConfig{Timing: emu.PortTiming{Name: "s", Op: 1, StallMin: 2, StallMax: 1}}, "stalls"},
	} {
		b, err := emu.NewTimed(emu.TimedConfig{PEs: 4})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.Ports(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one about %q", c.cfg, err, c.want)
		}
	}
	b, _ := emu.NewTimed(emu.TimedConfig{PEs: 4})
	if _, err := b.Ports(emu.RunConfig{Timing: emu.ISA}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Ports(emu.RunConfig{Timing: emu.ISA}); err == nil {
		t.Error("a second run on one timed board accepted")
	}
	for _, cfg := range []emu.TimedConfig{
		{PEs: 0}, {PEs: 33}, {PEs: 4, Cable: emu.Cable{Metres: []float64{1, 2}}},
		{PEs: 4, Cable: emu.Cable{Metres: []float64{-1}}}, {PEs: 4, Cable: emu.Cable{Skew: -1}},
	} {
		if _, err := emu.NewTimed(cfg); err == nil {
			t.Errorf("NewTimed(%+v) accepted", cfg)
		}
	}
}

// TestTimedVCD records a timed run and reads it back: the status register
// the file shows after each read is what the PE read, PC-side lines lag
// the board's by the cable, and times are in nanoseconds.
func TestTimedVCD(t *testing.T) {
	b, err := emu.NewTimed(emu.TimedConfig{PEs: 2, Cable: emu.Cable{Metres: []float64{2}}, PowerUp: []bool{false, false}})
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
	err = runTimed(t, b, emu.RunConfig{Timing: emu.ISA}, func(port *emu.TimedPort) error {
		p, err := papers.Open(port, papers.Config{PE: port.PE(), PEs: 2})
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
	want := 2*emu.DefaultWire.Propagation + emu.DefaultWire.Edge // 2 m, half of a 2 m edge
	if lag != want {
		t.Errorf("D6 reached the board %v after the PC drove it, want %v", lag, want)
	}
}

// nandWrapped runs a check-in and one NAND (PE k contributes 3<<k) on
// PEs 0 and 1 of an untimed board through recorded ports.
func nandWrapped(t *testing.T, b *emu.Board, rec *vcd.Recorder) []uint8 {
	t.Helper()
	results := make([]uint8, 2)
	var wg sync.WaitGroup
	for k := range 2 {
		port, err := b.Port(k)
		if err != nil {
			t.Fatal(err)
		}
		wrapped, err := rec.Wrap(k, port)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			p, err := papers.Open(wrapped, papers.Config{PE: k, PEs: 2, Timeout: 10 * time.Second})
			if err != nil {
				t.Error(err)
				return
			}
			defer p.Close()
			if results[k], err = p.NAND(uint8(0x3 << k)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	return results
}

// TestRecordVCDUntimed records an untimed run through wrapped ports: one
// time step per operation, each PC's status as it read it, and each PC's
// port lines as other names for the nets at its connector.
func TestRecordVCDUntimed(t *testing.T) {
	b, err := emu.New(2)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	rec, err := emu.RecordVCD(&buf, b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rec.Wrap(4, nil); err == nil {
		t.Error("wrapping PE 4 of a 4-connector board accepted")
	}
	results := nandWrapped(t, b, rec)
	ops := rec.Ops()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := vcd.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if f.End != ops+1 {
		t.Errorf("the file ends at step %d after %d operations, want %d", f.End, ops, ops+1)
	}
	reads := 0
	for k := range 2 {
		reads += len(f.Signal(fmt.Sprintf("pc.PE%d.read", k)).Changes)
		for i, c := range f.Signal(fmt.Sprintf("pc.PE%d.nError", k)).Changes {
			if board := f.Signal("board.I0").Changes[i]; c != board {
				t.Fatalf("PE %d's nError change %d is %v, the board's I0 %v: they are one net", k, i, c, board)
			}
		}
	}
	if reads == 0 || int64(reads) >= ops {
		t.Errorf("%d reads among %d operations", reads, ops)
	}
	if results[0] != ^uint8(0x3&0x6)&lpt.DataMask || results[1] != results[0] {
		t.Errorf("NAND results %#x, want %#x on both", results, ^uint8(0x2)&lpt.DataMask)
	}
}
