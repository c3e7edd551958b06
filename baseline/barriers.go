// Package baseline measures what the project's own figures are compared
// with, on the machine at hand and in the same invocation, so that a
// comparison is a ratio of two times taken minutes apart rather than two
// figures from different days: the fastest barriers Go itself offers
// between goroutines (Go), a plain Go TCP pair's round trip and block
// transfers (GoTCP), and MPI's collectives and data transfers between
// ranks (MPI, MPIData: programs in C, in this package, built with mpicc
// and run with mpirun when those are installed). docs/measurement.md says
// how each is used.
package baseline

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// GoBarriers are three barriers between n goroutines, in µs per barrier:
// Spin polls a shared generation count (yielding after spinPolls polls),
// Yield is the same barrier yielding after every poll, and Cond parks the
// waiters on a sync.Cond (the Go runtime's hand-off). Spinning wins while
// every goroutine has a CPU, parking once they outnumber the CPUs.
type GoBarriers struct {
	Spin, Yield, Cond float64
}

// Best is the lowest of the three: the floor for an emulator that runs
// each PE as a goroutine.
func (g GoBarriers) Best() float64 { return min(g.Spin, g.Yield, g.Cond) }

// Reporter is the part of a *testing.B that Report uses (an interface, so
// that a program importing this package does not link package testing).
type Reporter interface {
	ReportMetric(n float64, unit string)
	Elapsed() time.Duration
}

// Report adds g to a benchmark's metrics (spin-ns, yield-ns, cond-ns),
// with x-best: the benchmark's time per operation, over ops operations,
// divided by the best of the three.
func (g GoBarriers) Report(b Reporter, ops int) {
	b.ReportMetric(g.Spin*1e3, "spin-ns")
	b.ReportMetric(g.Yield*1e3, "yield-ns")
	b.ReportMetric(g.Cond*1e3, "cond-ns")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(ops)/(g.Best()*1e3), "x-best")
}

var (
	goMu    sync.Mutex
	goTimes = map[int]GoBarriers{}
)

// Go measures the three barriers between n goroutines, once per process
// for each n (a benchmark's repeated runs reuse the first figures).
func Go(n int) GoBarriers {
	goMu.Lock()
	defer goMu.Unlock()
	if g, ok := goTimes[n]; ok {
		return g
	}
	g := GoBarriers{
		Spin:  perBarrier(n, func() barrier { return &spinBarrier{n: int64(n), polls: spinPolls} }),
		Yield: perBarrier(n, func() barrier { return &spinBarrier{n: int64(n)} }),
		Cond:  perBarrier(n, func() barrier { return newCondBarrier(n) }),
	}
	goTimes[n] = g
	return g
}

type barrier interface{ wait() }

// spinPolls is how often a spinning waiter polls before it yields its CPU
// once: enough to cover a barrier while every goroutine runs, few enough
// that a descheduled one is not kept waiting for long.
const spinPolls = 1000

// spinBarrier counts arrivals; the last to arrive resets the count and
// starts the next generation, which the others poll for. The two words
// sit on separate cache lines, so the polling does not slow the arrivals.
type spinBarrier struct {
	n     int64
	polls int
	_     [64]byte
	count atomic.Int64
	_     [64]byte
	gen   atomic.Int64
	_     [64]byte
}

func (b *spinBarrier) wait() {
	g := b.gen.Load()
	if b.count.Add(1) == b.n {
		b.count.Store(0)
		b.gen.Add(1)
		return
	}
	for i := 1; b.gen.Load() == g; i++ {
		if i > b.polls {
			runtime.Gosched()
		}
	}
}

// condBarrier parks the waiters; the last to arrive wakes them all.
type condBarrier struct {
	mu       sync.Mutex
	woken    sync.Cond
	n, count int
	gen      int
}

func newCondBarrier(n int) *condBarrier {
	b := &condBarrier{n: n}
	b.woken.L = &b.mu
	return b
}

func (b *condBarrier) wait() {
	b.mu.Lock()
	defer b.mu.Unlock()
	g := b.gen
	if b.count++; b.count == b.n {
		b.count = 0
		b.gen++
		b.woken.Broadcast()
		return
	}
	for g == b.gen {
		b.woken.Wait()
	}
}

// perBarrier times rounds of barriers between n goroutines on a fresh
// barrier each round, doubling the round until it lasts minRound, and
// returns the last round's µs per barrier (a few warm-up barriers first).
func perBarrier(n int, mk func() barrier) float64 {
	const minRound = 50 * time.Millisecond
	for k := 64; ; k *= 2 {
		d := round(n, k, mk())
		if d >= minRound || k >= 1<<24 {
			return float64(d.Nanoseconds()) / float64(k+1) / 1e3
		}
	}
}

// round runs k+1 barriers on n goroutines after warm-up barriers and
// returns how long they took.
func round(n, k int, b barrier) time.Duration {
	const warm = 16
	var wg sync.WaitGroup
	var start time.Time
	for pe := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range warm {
				b.wait()
			}
			if pe == 0 {
				start = time.Now()
			}
			b.wait() // everyone has left warm-up (start is written before it)
			for range k {
				b.wait()
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}
