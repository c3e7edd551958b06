package linuxlpt

import (
	"context"
	"fmt"
	"testing"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/papers"
)

// regPort is a port that is only registers, and records every data write
// that moves a line the board reads (a strobe or a data line).
type regPort struct {
	data, control uint8
	moved         []string
}

func (p *regPort) WriteData(v uint8) {
	if (v^p.data)&(lpt.Strobes|lpt.DataMask) != 0 {
		p.moved = append(p.moved, fmt.Sprintf("%#02x over %#02x", v, p.data))
	}
	p.data = v
}
func (p *regPort) ReadData() uint8      { return p.data }
func (p *regPort) ReadStatus() uint8    { return 0 }
func (p *regPort) WriteControl(v uint8) { p.control = v }
func (p *regPort) ReadControl() uint8   { return p.control }
func (p *regPort) Err() error           { return nil }
func (p *regPort) Close() error         { return nil }

// TestProbeKeepsBoardLines: opening a port probes its data register while
// the other PEs may be running, so the probe must never move a strobe —
// that would complete their barriers (found by the 4-machine hil demo) —
// nor a data line (see TestProbeDuringNANDs), and must leave the register
// as it was.
func TestProbeKeepsBoardLines(t *testing.T) {
	for _, start := range []uint8{0x00, lpt.S0, lpt.S1, 0xaa, 0x55, lpt.Transparent, 0xff} {
		p := &regPort{data: start}
		if err := probeData(p); err != nil {
			t.Errorf("start %#02x: %v", start, err)
		}
		if len(p.moved) != 0 {
			t.Errorf("start %#02x: the probe moved a line the board reads: %v", start, p.moved)
		}
		if p.data != start {
			t.Errorf("start %#02x: the probe left %#02x", start, p.data)
		}
	}
}

// TestProbeDuringNANDs: a PE's program opening its port (and so probing it)
// while the others run NANDs must not change one of their results. The
// board reads every port's data lines, a transparent port's too: a probe
// that wrote data patterns made an arriving PE read as present in the
// others' check-in vote, and their line test read "data line D1 stuck at
// 0" (about one check-in in a hundred on a loaded host, in QEMU guests and
// on ppdev over FUSE).
func TestProbeDuringNANDs(t *testing.T) {
	const nands = 3000
	b, err := emu.New(3)
	if err != nil {
		t.Fatal(err)
	}
	late, err := b.Port(2) // a PE whose program is about to start
	if err != nil {
		t.Fatal(err)
	}
	late.WriteData(lpt.Transparent) // as the last run's Finish left it
	ctx, cancel := context.WithCancel(context.Background())
	probes := make(chan int)
	go func() {
		n := 0
		for ctx.Err() == nil {
			if err := probeData(late); err != nil {
				t.Error(err)
				break
			}
			n++
		}
		probes <- n
	}()
	err = emulate.RunPorts(ctx, b, 2, func(ctx context.Context, k int, port *emu.Port) error {
		p, err := papers.Open(port, papers.Config{PE: k, PEs: 2, FreshBoard: true, NoLineTest: true, CensusEvery: -1, Context: ctx})
		if err != nil {
			return err
		}
		defer p.Close()
		for i := range nands {
			x := uint8(lpt.DataMask) // all high: the NAND is 0 unless a line is pulled low
			if r, err := p.NAND(x); err != nil {
				return err
			} else if r != 0 {
				return fmt.Errorf("NAND %d of 0xf on every PE = %#x: the probe of the port beside them pulled lines low", i, r)
			}
		}
		return nil
	})
	cancel()
	n := <-probes
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d NANDs, %d probes beside them", nands, n)
}
