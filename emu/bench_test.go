package emu_test

import (
	"testing"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/lpt"

	"github.com/ttlpapers/ttlpapers/papers"
)

// BenchmarkEmulatedBarrier times one barrier of 2 PEs (goroutines) on the
// in-process board; ns/op is per barrier.
func BenchmarkEmulatedBarrier(b *testing.B) {
	benchOp(b, func(p *papers.PE) error { return p.Barrier() })
}

// BenchmarkEmulatedNAND times one 4-bit NAND of 2 PEs on the in-process board.
func BenchmarkEmulatedNAND(b *testing.B) {
	benchOp(b, func(p *papers.PE) error { _, err := p.NAND(5); return err })
}

func benchOp(b *testing.B, op func(*papers.PE) error) {
	err := papers.Emulate(2, papers.Config{}, func(p *papers.PE) error {
		if p.Self() == 0 {
			b.ResetTimer()
		}
		for i := 0; i < b.N; i++ {
			if err := op(p); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkWriteSettle times one data-register write that flips the strobes
// and settles the board, and a status read: the per-operation cost of the
// gate-level simulation, free of scheduling noise.
func BenchmarkWriteSettle(b *testing.B) {
	bd, err := emu.New(4)
	if err != nil {
		b.Fatal(err)
	}
	p, err := bd.Port(0)
	if err != nil {
		b.Fatal(err)
	}
	v := uint8(lpt.S1 | lpt.LG | lpt.DataMask)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		v ^= lpt.Strobes
		p.WriteData(v)
		p.ReadStatus()
	}
}
