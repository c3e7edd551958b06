package papers_test

// The TTL_PAPERS design paper (Dietz, Chung, Mattox and Muhammad, Purdue,
// January 1995; docs/seeds.md) as tests: every worked example and every
// operation count it gives, each row quoting its line.
// Where this driver chose otherwise, the row says so and tests our choice.

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/papers"
)

// costOf runs op once on every PE of an n-PE board and returns what PE 0
// spent: NANDs, and port operations when it is never kept waiting (it is
// the last to arrive at every barrier: lastPort), the count the seed's
// timings apply to.
func costOf(t *testing.T, n int, op func(p *papers.PE) error) (nands, ports uint64) {
	t.Helper()
	b, err := emu.New(n)
	if err != nil {
		t.Fatal(err)
	}
	var on atomic.Bool
	err = runOn(b, n, papers.Config{}, func(k int, port *emu.Port) lpt.Port {
		if k == 0 {
			return lastPort{port, b, n, &on}
		}
		return port
	}, func(p *papers.PE) error {
		if p.Self() == 0 {
			on.Store(true)
		}
		before, ops := p.Stats().NANDs, portOps(p)
		if err := op(p); err != nil {
			return err
		}
		if p.Self() == 0 {
			nands, ports = p.Stats().NANDs-before, portOps(p)-ops
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return nands, ports
}

// TestSeedOperationCounts: the paper's operation counts, at several PE
// counts.
// countRow is one operation count the paper states.
type countRow struct {
	seed  string
	op    func(p *papers.PE) error
	nands func(n int) uint64
	ports func(n int) uint64 // 0: not asserted
}

func ceil4(n int) uint64 { return uint64((n + 3) / 4) }

// seedCounts are the paper's operation counts.
var seedCounts = []countRow{
	{`§2.2 "TTL_PAPERS can perform barrier synchronizations using just two port operations."`,
		func(p *papers.PE) error { return p.Barrier() },
		func(int) uint64 { return 0 }, func(int) uint64 { return 2 }},
	{`§4.4 "this operation typically requires 5 port accesses rather than just the 2 port accesses used to implement a barrier synchronization without data communication."`,
		func(p *papers.PE) error { _, err := p.NAND(0x5); return err },
		func(int) uint64 { return 1 }, func(int) uint64 { return 5 }},
	{`§1.2 "computing a four-bit global NAND takes only one operation. Likewise, NAND can implement AND and OR functions by simply complementing the output or by complementing the inputs." (AND)`,
		func(p *papers.PE) error { _, err := p.AND4(0x5); return err },
		func(int) uint64 { return 1 }, func(int) uint64 { return 5 }},
	{`§5 table: "4-bit Global OR 6.3 6.3" (one NAND: 5 port operations at 1.26 µs)`,
		func(p *papers.PE) error { _, err := p.OR4(0x5); return err },
		func(int) uint64 { return 1 }, func(int) uint64 { return 5 }},
	{`§4.4 "ANY, ALL, and voting operations require just one such operation, or 5 port accesses." (ANY)`,
		func(p *papers.PE) error { _, err := p.Any(true); return err },
		func(int) uint64 { return 1 }, func(int) uint64 { return 5 }},
	{`§4.4 (ALL)`,
		func(p *papers.PE) error { _, err := p.All(true); return err },
		func(int) uint64 { return 1 }, func(int) uint64 { return 5 }},
	{`§5 table: "1-bit Multicast 6.3 6.3 * ceil(n / 4)" (vote: ceil(n/4) NANDs)`,
		func(p *papers.PE) error { _, err := p.Vote(true); return err },
		ceil4, func(n int) uint64 { return 5 * ceil4(n) }},
	{`§4.4 "Larger operations, such as an 8-bit global OR, 8-bit global AND, or broadcast require 2 of the above transmission sequences, or 10 port accesses." (OR)`,
		func(p *papers.PE) error { _, err := papers.OR(p, uint8(0x5a)); return err },
		func(int) uint64 { return 2 }, func(int) uint64 { return 10 }},
	{`§4.4 (8-bit AND)`,
		func(p *papers.PE) error { _, err := papers.AND(p, uint8(0x5a)); return err },
		func(int) uint64 { return 2 }, func(int) uint64 { return 10 }},
	{`§4.4 (8-bit broadcast); §5 table: "Broadcast 78K 78K": a byte per 2 NANDs, whatever n`,
		func(p *papers.PE) error { _, err := papers.Broadcast(p, p.PEs()-1, uint8(0x5a)); return err },
		func(int) uint64 { return 2 }, func(int) uint64 { return 10 }},
	{`§5 table: "Global OR 78K 78K": 2 NANDs per byte, whatever n`,
		func(p *papers.PE) error { _, err := papers.OR(p, uint64(0x5a)); return err },
		func(int) uint64 { return 16 }, func(int) uint64 { return 80 }},
	{`§5 table: "Permutation 20K 78K / n": every PE's byte crosses once, 2n NANDs. Ours adds the source mask (ceil((n+1)/4) NANDs), which lets a bad source fail on every PE`,
		func(p *papers.PE) error {
			_, err := papers.Multicast(p, (p.Self()+1)%p.PEs(), uint8(p.Self()))
			return err
		},
		func(n int) uint64 { return uint64(2*n) + ceil4(n+1) }, func(int) uint64 { return 0 }},
	{`§5 table: "Arbitrary Multicast 20K-78K 78K / (number of sources)": every PE receives from PE 0, one source: 2 NANDs, plus our source mask`,
		func(p *papers.PE) error { _, err := papers.Multicast(p, 0, uint8(p.Self())); return err },
		func(n int) uint64 { return 2 + ceil4(n+1) }, func(int) uint64 { return 0 }},
}

func TestSeedOperationCounts(t *testing.T) {
	rows := seedCounts
	for _, n := range []int{2, 4, 5, 8} {
		for _, r := range rows {
			nands, ports := costOf(t, n, r.op)
			if want := r.nands(n); nands != want {
				t.Errorf("%d PEs: %s\n\tNANDs %d, want %d", n, r.seed, nands, want)
			}
			if want := r.ports(n); want != 0 && ports != want {
				t.Errorf("%d PEs: %s\n\tport operations %d, want %d", n, r.seed, ports, want)
			}
		}
	}
}

// TestSeedNANDExamples: §1.2's worked examples of what one NAND computes.
func TestSeedNANDExamples(t *testing.T) {
	const n = 4
	rows := []struct {
		seed string
		in   func(pe int) uint8 // each PE's nybble
		want uint8
	}{
		{`§1.2 "To accomplish a four-bit broadcast from a single processor, all the other processors simply output 0xf — four 1 bits. Again, the result will be the complement of the data sent." (PE 2 sends 0x6)`,
			func(pe int) uint8 { return map[bool]uint8{true: 0x6, false: 0xf}[pe == 2] }, ^uint8(0x6) & 0xf},
		{`§1.2 "each processor sends four bits of data such that processor i's bit i is the data it wishes to send, and the other bits are all 1 values. For example, bit 2 will be 1 for processors 0, 1, and 3; thus, NANDing these signals together will result in a signal that is the complement of bit 2 from processor 2." (PEs send 1, 0, 0, 1)`,
			func(pe int) uint8 { return 0xf &^ (uint8([]uint8{1, 0, 0, 1}[pe]^1) << pe) }, 0b1001 ^ 0xf},
		{`§1.2 "TTL_PAPERS data is literally a four-bit wide NAND of data sent across all processors"`,
			func(pe int) uint8 { return []uint8{0xe, 0xd, 0xf, 0x7}[pe] }, ^uint8(0xe&0xd&0xf&0x7) & 0xf},
	}
	for _, r := range rows {
		err := emulate.Run(n, papers.Config{}, func(p *papers.PE) error {
			got, err := p.NAND(r.in(p.Self()))
			if err == nil && got != r.want {
				err = fmt.Errorf("NAND = %04b, want %04b", got, r.want)
			}
			return err
		})
		if err != nil {
			t.Errorf("%s: %v", r.seed, err)
		}
	}
	// §4.4 "to extract the 4-bit result we simply use: ((nand_result >> 3) & 0x0f)"
	if lpt.InputShift != 3 || lpt.DataMask != 0x0f {
		t.Errorf("NAND result = (status >> %d) & %#x, the seed's is (status >> 3) & 0x0f", lpt.InputShift, lpt.DataMask)
	}
}

// TestSeedParticipation: §2.2 on PEs that take no part.
func TestSeedParticipation(t *testing.T) {
	// "If a PC wants to mark itself as not participating in a group of
	// barrier synchronizations, it should simply output 0xcf; this
	// corresponds to setting P_S1, P_S0, P_D3, P_D2, P_D1, and P_D0 all
	// equal to 1."
	if bits := lpt.S1 | lpt.S0 | lpt.D3 | lpt.D2 | lpt.D1 | lpt.D0; bits != 0xcf {
		t.Errorf("S1|S0|D3..D0 = %#x, the seed's is 0xcf", bits)
	}
	if lpt.Transparent != 0xcf {
		t.Errorf("transparent byte %#x, the seed's is 0xcf", lpt.Transparent)
	}
	// "Notice that, if a PC is not connected to one of the TTL_PAPERS
	// cables, the TTL inputs will all float high, causing the missing PC
	// to be harmlessly ignored in operations performed by the PCs still
	// connected." — and a PC writing 0xcf by hand is ignored the same way.
	for _, how := range []string{"unplugged", "0xcf written"} {
		b, err := emu.New(4)
		if err != nil {
			t.Fatal(err)
		}
		if how == "unplugged" {
			b.Inject(emu.Fault{PE: 3, Kind: emu.Unplugged})
		} else {
			port, _ := b.Port(3)
			port.WriteData(lpt.Transparent)
			port.WriteControl(0)
		}
		err = emulate.RunOn(b, 3, papers.Config{Timeout: 5 * time.Second}, func(p *papers.PE) error {
			if err := p.Barrier(); err != nil {
				return err
			}
			got, err := p.NAND([]uint8{0xe, 0xd, 0xb}[p.Self()])
			if err == nil && got != ^uint8(0xe&0xd&0xb)&0xf {
				err = fmt.Errorf("NAND without PE 3 = %#x", got)
			}
			return err
		})
		if err != nil {
			t.Errorf("PE 3 %s: %v", how, err)
		}
	}
	// §5 table: "Partition 0.1 0.1". Our difference: the bare 0xcf write is
	// the seed's partition, but Leave also writes control 0 (P_NAK low:
	// the acknowledge barrier needs every P_NAK low —
	// TestLeaveAcknowledgesForever) and announces itself through the
	// interrupt, so that the others learn it (Participants) instead of
	// combining without it unawares (TestCollectivesWithDepartedPE).
}

// TestSeedHalt: §2.2 "In contrast, setting both P_S1 and P_S0 to 0 will
// ensure that all barrier operations halt." PE 1 arrives at a barrier
// (StartBarrier raises its strobe) and then writes S1=S0=0; PE 0 arrives
// after that write, so without it the barrier would complete. Both phases:
// the barrier into S0 and the barrier into S1. (TestStalledPE names the
// staller too.)
func TestSeedHalt(t *testing.T) {
	for pre := range 2 { // barriers before: the halted one is the other phase
		halted := make(chan struct{}, 1) // PE 1 has written S1=S0=0 (closed: it has returned)
		done := make(chan struct{})      // PE 0 has returned
		err := emulate.Run(2, papers.Config{Timeout: 100 * time.Millisecond, CheckInTimeout: 10 * time.Second}, func(p *papers.PE) error {
			if p.Self() == 0 {
				defer close(done)
			} else {
				defer close(halted)
			}
			for range pre {
				if err := p.Barrier(); err != nil {
					return err
				}
			}
			if p.Self() == 1 {
				if err := p.StartBarrier(); err != nil {
					return err
				}
				p.Port().WriteData(lpt.DataMask) // S1 = S0 = 0
				halted <- struct{}{}
				<-done           // stay open: closing would park the port, which halts barriers too
				return p.Close() // the run is broken on purpose: no end of run to prove
			}
			if _, ok := <-halted; !ok {
				return errors.New("PE 1 returned before halting the barriers")
			}
			var te *papers.TimeoutError
			if err := p.Barrier(); !errors.As(err, &te) {
				return fmt.Errorf("barrier %d with S1=S0=0 on PE 1: %v, want it to halt (a timeout)", pre+1, err)
			}
			return p.Close()
		})
		if err != nil {
			t.Error(err)
		}
	}
}

// TestSeedLEDs: §2.2's colour code, and §3.3 "the LEDs are explicitly set
// under software control".
func TestSeedLEDs(t *testing.T) {
	b, err := emu.New(2)
	if err != nil {
		t.Fatal(err)
	}
	rows := []struct {
		seed string
		set  papers.LED
		want lpt.LED
	}{
		{`"When a parallel program is running, the LED should be lighted green, which is accomplished by making P_LG=1 and P_LR=0."`, papers.Green, lpt.Green},
		{`"When a PC is waiting for a barrier, it should make its LED red by setting P_LG=0 and P_LR=1." (TestLED: the driver does it itself while a wait is slow)`, papers.Red, lpt.Red},
		{`"It is also possible to generate an orange status light by setting both P_LG and P_LR to 1, however, this setting is used only rarely (as a 'special' status indication)."`, papers.Orange, lpt.Orange},
		{`"When TTL_PAPERS is not in use, both bits should be set to 0, yielding a dark LED."`, papers.Dark, lpt.Dark},
	}
	err = emulate.RunOn(b, 2, papers.Config{}, func(p *papers.PE) error {
		if p.Self() == 1 {
			return nil
		}
		if got := b.LED(0); got != lpt.Green {
			return fmt.Errorf("after Open the LED is %v, want green (a program is running)", got)
		}
		for _, r := range rows {
			if err := p.SetLED(r.set); err != nil {
				return err
			}
			if got := b.LED(0); got != r.want {
				return fmt.Errorf("%s\n\tSetLED(%v) shows %v", r.seed, r.set, got)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := b.LED(0); got != lpt.Dark {
		t.Errorf("after Close the LED is %v, want dark (not in use)", got)
	}
}

// TestSeedInterrupt: §2.2 "When all PCs set their P_NAK to 0, this simply
// acts to perform a special interrupt barrier. The extended interrupt
// functionality is implemented by sending an interrupt code as a
// side-effect of this special barrier."
func TestSeedInterrupt(t *testing.T) {
	err := emulate.Run(3, papers.Config{}, func(p *papers.PE) error {
		if p.Self() == 2 {
			code, err := p.Interrupt(0xb)
			if err == nil && code != 0xb {
				err = fmt.Errorf("raiser got code %#x", code)
			}
			return err
		}
		ie, err := untilInterrupt(p)
		if err == nil && ie.Code != 0xb {
			err = fmt.Errorf("code %#x delivered, want 0xb", ie.Code)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
