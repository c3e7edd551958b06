package papers_test

import (
	"fmt"
	"testing"

	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/papers"
)

// benchCollective times f on PE 0 of an emulated n-PE board while every
// PE runs the same loop (emulated time, on a shared machine: noisy).
func benchCollective(b *testing.B, n int, f func(p *papers.PE, out []int32) error) {
	b.ReportAllocs()
	err := emulate.Run(n, papers.Config{}, func(p *papers.PE) error {
		out := make([]int32, n)
		if err := p.Barrier(); err != nil {
			return err
		}
		if p.Self() == 0 {
			b.ResetTimer()
		}
		for range b.N {
			if err := f(p, out); err != nil {
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
}

func BenchmarkCollectives(b *testing.B) {
	in := []int32{1, 2, 3, 4}
	for _, c := range []struct {
		name string
		f    func(p *papers.PE, out []int32) error
	}{
		{"OR32", func(p *papers.PE, _ []int32) error { _, err := papers.OR(p, uint32(p.Self())); return err }},
		{"AND32", func(p *papers.PE, _ []int32) error { _, err := papers.AND(p, uint32(p.Self())); return err }},
		{"BroadcastByte", func(p *papers.PE, _ []int32) error { _, err := papers.Broadcast(p, 0, uint8(1)); return err }},
		{"BroadcastF64", func(p *papers.PE, _ []int32) error { _, err := papers.Broadcast(p, 0, 1.5); return err }},
		{"Gather32", func(p *papers.PE, out []int32) error { return papers.Gather(p, int32(p.Self()), out) }},
		{"Permutation32", func(p *papers.PE, _ []int32) error {
			_, err := papers.Multicast(p, (p.Self()+1)%p.PEs(), int32(1))
			return err
		}},
		{"Scatter32", func(p *papers.PE, _ []int32) error { _, err := papers.Scatter(p, 0, in[:p.PEs()]); return err }},
		{"ReduceSum32", func(p *papers.PE, _ []int32) error { _, err := papers.Reduce(p, papers.Sum, int32(1)); return err }},
		{"ReduceMax32", func(p *papers.PE, _ []int32) error {
			_, err := papers.Reduce(p, papers.Max, int32(p.Self()))
			return err
		}},
		{"ReduceMinF64", func(p *papers.PE, _ []int32) error {
			_, err := papers.Reduce(p, papers.Min, float64(p.Self()))
			return err
		}},
		{"ScanSum32", func(p *papers.PE, _ []int32) error {
			_, err := papers.Scan(p, papers.Sum, int32(1), papers.Exclusive)
			return err
		}},
		{"ScanOr32", func(p *papers.PE, _ []int32) error {
			_, err := papers.Scan(p, papers.BitOr, uint32(1)<<p.Self(), papers.Inclusive)
			return err
		}},
		{"ReduceFunc32", func(p *papers.PE, _ []int32) error {
			_, err := papers.ReduceFunc(p, int32(1), func(a, b int32) int32 { return a*3 + b })
			return err
		}},
	} {
		for _, n := range []int{2, 4} {
			b.Run(fmt.Sprintf("%s/%dPEs", c.name, n), func(b *testing.B) { benchCollective(b, n, c.f) })
		}
	}
}
