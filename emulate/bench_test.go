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
	benchOpOn(b, benchPEs, papers.Config{}, op)
}

// benchOpOn is benchOp with cfg on the PE counts pes.
func benchOpOn(b *testing.B, pes []int, cfg papers.Config, op func(p *papers.PE) error) {
	for _, n := range pes {
		b.Run(fmt.Sprintf("pes=%d", n), func(b *testing.B) {
			g := baseline.Go(n)
			b.ReportAllocs()
			err := emulate.Run(n, cfg, func(p *papers.PE) error {
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

// censusOps are the operations BenchmarkCensus and BenchmarkVerify time: a
// barrier, a bitwise reduction (Max, no gather) and a gathering one (Sum).
var censusOps = []struct {
	name string
	f    func(p *papers.PE) error
}{
	{"barrier", func(p *papers.PE) error { return p.Barrier() }},
	{"max-int32", func(p *papers.PE) error { _, err := papers.Reduce(p, papers.Max, int32(p.Self())); return err }},
	{"sum-int32", func(p *papers.PE) error { _, err := papers.Reduce(p, papers.Sum, int32(p.Self())); return err }},
}

// BenchmarkCensus: what the census of the participants costs (docs/spmd.md,
// "The census"): a barrier, a bitwise reduction (Max, no gather) and a
// gathering one (Sum, which takes a census every time the census is on) on
// 4 PEs, with a census every call, every DefaultCensusEvery calls, and off.
func BenchmarkCensus(b *testing.B) {
	for _, op := range censusOps {
		for _, every := range []int{1, papers.DefaultCensusEvery, -1} {
			b.Run(fmt.Sprintf("%s/every=%d", op.name, every), func(b *testing.B) {
				benchOpOn(b, []int{4}, papers.Config{CensusEvery: every}, op.f)
			})
		}
	}
}

// BenchmarkVerify: what Config.Verify costs per call (docs/protocol.md,
// "Proving the run"): the proof (a census and the line test, ceil(n/4)+n+1
// NANDs) before every collective, beside the same collective without it,
// on 4 PEs, in the same invocation.
func BenchmarkVerify(b *testing.B) {
	for _, op := range censusOps {
		for _, verify := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/verify=%v", op.name, verify), func(b *testing.B) {
				benchOpOn(b, []int{4}, papers.Config{Verify: verify}, op.f)
			})
		}
	}
}
