package baseline

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/internal/testenv"
)

// TestGo: every barrier completes and has a time (how long is the
// benchmarks' business: a loaded machine makes a spin barrier of 3
// goroutines on 2 cores take milliseconds); a second call gives the same
// figures (measured once per process).
func TestGo(t *testing.T) {
	for _, n := range []int{1, 2, 3} {
		g := Go(n)
		for name, v := range map[string]float64{"spin": g.Spin, "yield": g.Yield, "cond": g.Cond} {
			if !(v > 0 && !math.IsInf(v, 0)) {
				t.Errorf("%d goroutines: %s barrier %v µs", n, name, v)
			}
		}
		if g.Best() > min(g.Spin, g.Yield, g.Cond) {
			t.Errorf("best %v of %+v", g.Best(), g)
		}
		if again := Go(n); again != g {
			t.Errorf("%d goroutines: measured again: %+v, then %+v", n, g, again)
		}
	}
}

// TestBarrierOrders: no goroutine leaves a barrier before every one has
// reached it.
func TestBarrierOrders(t *testing.T) {
	const n, rounds = 4, 200
	for name, b := range map[string]barrier{"spin": &spinBarrier{n: n, polls: spinPolls}, "yield": &spinBarrier{n: n}, "cond": newCondBarrier(n)} {
		var arrived [rounds]atomic.Int64
		var early atomic.Int64
		var wg sync.WaitGroup
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := range arrived {
					arrived[r].Add(1)
					b.wait()
					if arrived[r].Load() != n {
						early.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		if early.Load() != 0 {
			t.Errorf("%s: %d times a goroutine left a barrier before every one arrived", name, early.Load())
		}
	}
}

// TestMPI runs both programs when MPI is installed.
func TestMPI(t *testing.T) {
	defer Cleanup()
	c, err := MPI(2, false)
	if errors.Is(err, ErrAbsent) {
		testenv.Missing(t, "%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !(c.Barrier > 0 && c.AllreduceInt > 0 && c.BcastByte > 0) {
		t.Errorf("collectives: %+v", c)
	}
	figs, err := MPIData(false)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"round_trip_us", "send_us", "get_us", "put_us", "put_bw_MBps size=64", "put_bw_MBps size=1048576", "get_bw_MBps size=1048576"} {
		if figs[name] <= 0 {
			t.Errorf("datanet: no %s in %v", name, figs)
		}
	}
}

// BenchmarkGo times each barrier on its own between n goroutines: ns/op is
// per barrier, the figure Go reports in µs.
func BenchmarkGo(b *testing.B) {
	for _, n := range []int{2, 4, 8, 32} {
		for _, kind := range []struct {
			name string
			mk   func() barrier
		}{
			{"spin", func() barrier { return &spinBarrier{n: int64(n), polls: spinPolls} }},
			{"yield", func() barrier { return &spinBarrier{n: int64(n)} }},
			{"cond", func() barrier { return newCondBarrier(n) }},
		} {
			b.Run(fmt.Sprintf("%s/n=%d", kind.name, n), func(b *testing.B) {
				bar := kind.mk()
				b.ResetTimer()
				d := round(n, b.N-1, bar)
				b.StopTimer()
				b.ReportMetric(float64(d.Nanoseconds())/float64(b.N), "ns/op")
			})
		}
	}
}

// TestGoTCP: each operation of the plain TCP pair moves what it says.
func TestGoTCP(t *testing.T) {
	g, err := NewGoTCP(1<<20, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.RoundTrip(); err != nil {
		t.Fatal(err)
	}
	block := make([]byte, 1<<20)
	for i := range block {
		block[i] = byte(i * 7)
	}
	if err := g.Put(block); err != nil {
		t.Fatal(err)
	}
	back := make([]byte, len(block))
	if err := g.Get(back); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back, block) {
		t.Error("the block got back is not the block put")
	}
	if err := g.Put(make([]byte, 2<<20)); err == nil {
		t.Error("a block over the server's limit was acknowledged")
	}
	if err := g.Close(); err == nil {
		t.Error("the server did not report the block over its limit")
	}
}

// TestGoTCPData: the Go pair's figures are named as MPIData's, and each
// is positive.
func TestGoTCPData(t *testing.T) {
	figs, err := GoTCPData([]int{64, 64 << 10}, 1, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"round_trip_us", "put_bw_MBps size=64", "get_bw_MBps size=65536"} {
		if figs[name] <= 0 {
			t.Errorf("no %s in %v", name, figs)
		}
	}
}
