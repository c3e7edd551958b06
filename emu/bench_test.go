package emu_test

import (
	"fmt"
	"testing"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// BenchmarkWriteSettle times one data-register write that flips the strobes
// and settles the board, and a status read: the per-operation cost of the
// gate-level simulation, free of scheduling noise, on boards of each size.
func BenchmarkWriteSettle(b *testing.B) {
	for _, n := range []int{4, 8, 32} {
		b.Run(fmt.Sprintf("pes=%d", n), func(b *testing.B) {
			bd, err := emu.New(n)
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
		})
	}
}

// BenchmarkReadStatus times a status read when nothing has changed (a
// poll).
func BenchmarkReadStatus(b *testing.B) {
	bd, _ := emu.New(32)
	p, _ := bd.Port(0)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		p.ReadStatus()
	}
}
