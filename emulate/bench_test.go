package emulate_test

import (
	"fmt"
	"testing"

	"github.com/ttlpapers/ttlpapers/baseline"
	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/papers"
)

// benchPEs are the PE counts of the in-process benchmarks.
var benchPEs = []int{2, 4, 8, 32}

// benchOp runs op b.N times on every PE of an in-process emulated board;
// ns/op is the time per operation of the whole cluster. Beside it, the
// native Go barriers of package baseline, measured in the same invocation
// with as many goroutines — spin, yield and sync.Cond — and the ratio to
// the best of them ("x-best"), the floor for a PE per goroutine.
func benchOp(b *testing.B, op func(p *papers.PE) error) {
	for _, n := range benchPEs {
		b.Run(fmt.Sprintf("pes=%d", n), func(b *testing.B) {
			g := baseline.Go(n)
			b.ReportAllocs()
			err := emulate.Run(n, papers.Config{}, func(p *papers.PE) error {
				if err := p.Barrier(); err != nil {
					return err
				}
				if p.Self() == 0 {
					b.ResetTimer()
				}
				for i := 0; i < b.N; i++ {
					if err := op(p); err != nil {
						return err
					}
				}
				if p.Self() == 0 {
					b.StopTimer()
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			g.Report(b, b.N)
		})
	}
}

// BenchmarkBarrier: one barrier of n PEs (goroutines).
func BenchmarkBarrier(b *testing.B) {
	benchOp(b, func(p *papers.PE) error { return p.Barrier() })
}

// BenchmarkNAND: one 4-bit NAND of n PEs (5 port operations each).
func BenchmarkNAND(b *testing.B) {
	benchOp(b, func(p *papers.PE) error { _, err := p.NAND(uint8(p.Self()) & 0xf); return err })
}

func BenchmarkVote(b *testing.B) {
	benchOp(b, func(p *papers.PE) error { _, err := p.Vote(true); return err })
}
