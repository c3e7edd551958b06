package emu

import (
	"testing"

	"github.com/ttlpapers/ttlpapers/lpt"
)

func ports(t *testing.T, b *Board) []*Port {
	t.Helper()
	var ps []*Port
	for k := 0; k < b.PEs(); k++ {
		p, err := b.Port(k)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	return ps
}

func level(t *testing.T, b *Board, net string) bool {
	t.Helper()
	v, err := b.NetLevel(net)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestBarrierFlipFlop drives the 74LS74's barrier half through its preset and
// clear trees, including the both-asserted case.
func TestBarrierFlipFlop(t *testing.T) {
	b, _ := New(4)
	ps := ports(t, b)
	writeAll := func(v uint8) {
		for _, p := range ps {
			p.WriteData(v)
		}
	}
	writeAll(lpt.S1)
	if !level(t, b, "RDYQ") || ps[0].ReadStatus()&lpt.RDY != 0 {
		t.Fatal("all at S1: RDYQ should be 1 and status 0x80 read 0")
	}
	ps[0].WriteData(lpt.S0)
	if !level(t, b, "RDYQ") {
		t.Fatal("one PE at S0: RDYQ must hold 1")
	}
	writeAll(lpt.S0)
	if level(t, b, "RDYQ") || ps[3].ReadStatus()&lpt.RDY == 0 {
		t.Fatal("all at S0: RDYQ should be 0 and status 0x80 read 1 (Busy inverted)")
	}
	// Every PE transparent: preset and clear both low drive Q high.
	writeAll(lpt.Transparent)
	if !level(t, b, "nALL_S0") == false || level(t, b, "nALL_S1") || !level(t, b, "RDYQ") {
		t.Fatal("all transparent: both trees low, Q must be high")
	}
	// Releasing clear first leaves preset in charge, and the other way.
	writeAll(lpt.S1)
	if !level(t, b, "RDYQ") {
		t.Fatal("after release to S1, Q must be 1")
	}
	writeAll(lpt.Transparent)
	writeAll(lpt.S0)
	if level(t, b, "RDYQ") {
		t.Fatal("after release to S0, Q must be 0")
	}
	if b.Contention() != 0 {
		t.Fatalf("%d driver contentions", b.Contention())
	}
}

// TestInterruptLatch checks the edge-triggered interrupt flag and the
// acknowledge barrier, and the per-PE Busy multiplexer.
func TestInterruptLatch(t *testing.T) {
	b, _ := New(4)
	ps := ports(t, b)
	for _, p := range ps {
		p.WriteControl(lpt.NAK)
	}
	if !level(t, b, "nINTQ") {
		t.Fatal("power-on: interrupt flag should be clear (all acknowledged at power-on)")
	}
	ps[2].WriteControl(lpt.NAK | lpt.IRQ)
	if level(t, b, "nINTQ") {
		t.Fatal("P_IRQ rising edge must latch the flag")
	}
	ps[1].WriteControl(lpt.NAK | lpt.SEL)
	if ps[1].ReadStatus()&lpt.INT == 0 {
		t.Fatal("with P_SEL=1 the pending interrupt must read as status 0x80 = 1")
	}
	if ps[0].ReadStatus()&lpt.RDY != 0 == false && level(t, b, "RDYQ") == false {
		t.Fatal("PE 0 (P_SEL=0) must still see RDYQ")
	}
	ps[2].WriteControl(lpt.NAK) // dropping the request does not clear the latch
	if level(t, b, "nINTQ") {
		t.Fatal("the flag is a latch: dropping P_IRQ must not clear it")
	}
	for k, p := range ps {
		p.WriteControl(lpt.SEL) // P_NAK=0: acknowledge
		if cleared := level(t, b, "nINTQ"); cleared != (k == 3) {
			t.Fatalf("after %d acknowledges the flag cleared=%v", k+1, cleared)
		}
	}
	if ps[1].ReadStatus()&lpt.INT != 0 {
		t.Fatal("acknowledged interrupt still reads pending")
	}
	for _, p := range ps {
		p.WriteControl(lpt.NAK)
	}
	ps[0].WriteControl(lpt.NAK | lpt.IRQ)
	if level(t, b, "nINTQ") {
		t.Fatal("a new rising edge must latch again")
	}
	if b.Contention() != 0 {
		t.Fatalf("%d driver contentions", b.Contention())
	}
}

// TestDataNAND: each input bit is the NAND of every PE's data bit, read
// through the status register's non-inverted lines.
func TestDataNAND(t *testing.T) {
	for _, n := range []int{4, 8, 16, 32} {
		b, _ := New(n)
		ps := ports(t, b)
		for trial := 0; trial < 64; trial++ {
			and := uint8(0xf)
			for k, p := range ps {
				v := uint8((trial*7 + k*3) >> (k % 3) & 0xf)
				if k == trial%n {
					v = uint8(trial) & 0xf
				}
				and &= v
				p.WriteData(lpt.S1 | v)
			}
			for k, p := range ps {
				if got := p.ReadStatus() >> lpt.InputShift & lpt.DataMask; got != ^and&0xf {
					t.Fatalf("%d PEs, trial %d: PE %d reads %#x, want %#x", n, trial, k, got, ^and&0xf)
				}
			}
		}
	}
}

func TestFloatingAndFaults(t *testing.T) {
	b, _ := New(2) // connectors 2 and 3 unplugged
	ps := ports(t, b)
	ps[0].WriteData(lpt.S1 | 0x5)
	ps[1].WriteData(lpt.S1 | 0xf)
	if got := ps[0].ReadStatus() >> 3 & 0xf; got != 0xa {
		t.Fatalf("unplugged PEs must float high and be ignored: NAND %#x, want 0xa", got)
	}
	if got := ps[2].ReadStatus() & lpt.StatusPins; got != 0x78 {
		t.Fatalf("an unplugged port reads all inputs high: %#x, want 0x78", got)
	}
	f, err := ParseFault("PE1.D1=stuck0")
	if err != nil {
		t.Fatal(err)
	}
	b.Inject(f)
	if got := ps[0].ReadStatus() >> 3 & 0xf; got != 0xa|0x2 {
		t.Fatalf("PE1.D1 stuck at 0: NAND %#x, want 0xa", got)
	}
	if ps[1].ReadData() != lpt.S1|0xf {
		t.Fatal("a stuck line does not change the data register's latch")
	}
	f, _ = ParseFault("PE0.nError=stuck1")
	b.Inject(f)
	if got := ps[0].ReadStatus() >> 3 & 0x1; got != 1 {
		t.Fatal("PE0.nError stuck at 1 must read 1 at PE 0")
	}
	b.Repair(1)
	b.Repair(0)
	f, _ = ParseFault("PE1=unplugged")
	b.Inject(f)
	if got := ps[0].ReadStatus() >> 3 & 0xf; got != 0xa {
		t.Fatalf("PE 1 unplugged: NAND %#x, want 0xa", got)
	}
	for _, bad := range []string{"PE1.D9=stuck0", "PE1.D1=stuck2", "PE1", "X1.D1=stuck0", "PE1.D1=unplugged", "PEx.D1=stuck1"} {
		if _, err := ParseFault(bad); err == nil {
			t.Errorf("ParseFault(%q) succeeded", bad)
		}
	}
	if err := b.Inject(Fault{PE: 9, Kind: Unplugged}); err == nil {
		t.Error("fault on PE 9 of a 4-PE board accepted")
	}
}

func TestPortClaim(t *testing.T) {
	b, _ := New(4)
	p, err := b.Port(1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Port(1); err == nil {
		t.Fatal("a port was handed out twice")
	}
	p.Close()
	if _, err := b.Port(1); err != nil {
		t.Fatalf("port not released by Close: %v", err)
	}
	if _, err := b.Port(4); err == nil {
		t.Fatal("Port(4) on a 4-PE board succeeded")
	}
}
