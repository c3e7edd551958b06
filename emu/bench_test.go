package emu_test

import (
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/baseline"
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

// Where a barrier of goroutine PEs spends its time, layer by layer, each
// beside the native Go barriers with as many goroutines (package
// baseline):
// BenchmarkHandOff is the way Wait parks and wakes, with no board;
// BenchmarkPortBarrier adds the emulated board (port writes, settles,
// status reads), with no driver; emulate's BenchmarkBarrier adds the
// driver (papers.PE.Barrier: LED writes, interrupt checks, deadlines).
var layerPEs = []int{2, 4, 8, 32}

// BenchmarkPortBarrier: n goroutines, each holding a port of an n-PE board,
// run the seed's barrier at the port — flip both strobes, read the status
// until the ready flag follows, calling the port's Wait between reads —
// and nothing else.
func BenchmarkPortBarrier(b *testing.B) {
	for _, n := range layerPEs {
		b.Run(fmt.Sprintf("pes=%d", n), func(b *testing.B) {
			g := baseline.Go(n)
			bd, err := emu.New(n)
			if err != nil {
				b.Fatal(err)
			}
			ports := make([]*emu.Port, n)
			for k := range ports {
				if ports[k], err = bd.Port(k); err != nil {
					b.Fatal(err)
				}
				ports[k].WriteControl(lpt.NAK)
				ports[k].WriteData(lpt.S1 | lpt.DataMask)
			}
			var failed atomic.Bool
			var wg sync.WaitGroup
			b.ResetTimer()
			for _, p := range ports {
				wg.Add(1)
				go func() {
					defer wg.Done()
					v := uint8(lpt.S1 | lpt.DataMask)
					for range b.N {
						v ^= lpt.Strobes
						p.WriteData(v)
						for st := p.ReadStatus(); (st&lpt.RDY != 0) != (v&lpt.S0 != 0); st = p.ReadStatus() {
							if failed.Load() || !p.Wait(st, lpt.RDY, time.Second, nil) && p.Err() != nil {
								failed.Store(true)
								return
							}
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			if failed.Load() {
				b.Fatal("a port failed")
			}
			g.Report(b, b.N)
		})
	}
}

// BenchmarkHandOff: n goroutines meet at a barrier that parks and wakes as
// the emulator's Wait does, with no board: the count under a mutex, each
// waiter on a channel of its own and registered in a sleepers word, the
// last arrival waking them one by one. Its ratio to the sync.Cond anchor
// is the floor of this way of waiting.
func BenchmarkHandOff(b *testing.B) {
	for _, n := range layerPEs {
		b.Run(fmt.Sprintf("pes=%d", n), func(b *testing.B) {
			g := baseline.Go(n)
			var (
				mu       sync.Mutex
				count    int
				phase    atomic.Int64
				sleepers atomic.Uint64
				wake     = make([]chan struct{}, n)
				wg       sync.WaitGroup
			)
			for k := range wake {
				wake[k] = make(chan struct{}, 1)
			}
			b.ResetTimer()
			for k := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range b.N {
						mu.Lock()
						p := phase.Load()
						last := count == n-1
						if count++; last {
							count = 0
							phase.Add(1)
						}
						mu.Unlock()
						if last {
							for m := sleepers.Swap(0); m != 0; m &= m - 1 {
								select {
								case wake[bits.TrailingZeros64(m)] <- struct{}{}:
								default:
								}
							}
						}
						for phase.Load() == p {
							if sleepers.Or(1 << k); phase.Load() == p {
								<-wake[k]
							}
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			g.Report(b, b.N)
		})
	}
}
