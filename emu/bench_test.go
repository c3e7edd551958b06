package emu_test

import (
	"testing"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// BenchmarkEmulatedBarrier times one barrier of 2 PEs (goroutines) on the
// in-process board; ns/op is per barrier.
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
