package papers_test

import (
	"fmt"
	"testing"

	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/papers"
)

// benchOp runs op b.N times on every PE of an emulated cluster; ns/op is the
// time per operation of the whole cluster (all PEs run concurrently).
func benchOp(b *testing.B, op func(p *papers.PE) error) {
	for _, n := range []int{2, 4} {
		b.Run(fmt.Sprintf("pes=%d", n), func(b *testing.B) {
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
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		})
	}
}

func BenchmarkBarrier(b *testing.B) {
	benchOp(b, func(p *papers.PE) error { return p.Barrier() })
}

func BenchmarkNAND(b *testing.B) {
	benchOp(b, func(p *papers.PE) error { _, err := p.NAND(5); return err })
}

func BenchmarkVote(b *testing.B) {
	benchOp(b, func(p *papers.PE) error { _, err := p.Vote(true); return err })
}
