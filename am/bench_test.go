package am_test

import (
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/am"
	"github.com/ttlpapers/ttlpapers/papers"
)

// roundTripper is PE 0's side of a ping-pong: a request whose handler on
// the other PE replies, and the reply's handler.
type roundTripper struct {
	ep           *am.Endpoint
	req, rep     am.HandlerID
	replies, got int
}

func newRoundTripper(ep *am.Endpoint) *roundTripper {
	r := &roundTripper{ep: ep}
	r.req = ep.Register(func(m *am.Msg) {
		r.got++
		m.Reply(r.rep, m.Args)
	})
	r.rep = ep.Register(func(*am.Msg) { r.replies++ })
	return r
}

func (r *roundTripper) once(dst int) error {
	want := r.replies + 1
	if err := r.ep.Request(dst, r.req, am.Args{1}); err != nil {
		return err
	}
	return r.ep.Wait("round trip", dst, func() bool { return r.replies == want })
}

// serve polls until PE 0 says stop (a request with argument 0).
func (r *roundTripper) serveUntil(stop *bool) error {
	return r.ep.Wait("serve", 0, func() bool { return *stop })
}

// roundTrips runs client on PE 0 of 2 goroutine PEs with a roundTripper
// to PE 1, which serves until client returns.
func roundTrips(tb testing.TB, client func(r *roundTripper) error) error {
	return run(tb, 2, 0, func(p *papers.PE, ep *am.Endpoint) error {
		r := newRoundTripper(ep)
		stop := false
		hStop := ep.Register(func(*am.Msg) { stop = true })
		if ep.Self() == 1 {
			return r.serveUntil(&stop)
		}
		if err := client(r); err != nil {
			return err
		}
		return ep.Request(1, hStop, am.Args{})
	})
}

// TestZeroAllocs: a round trip — request, handler, reply, reply handler,
// the waits on both sides — allocates nothing, on either PE.
func TestZeroAllocs(t *testing.T) {
	var allocs float64
	err := roundTrips(t, func(r *roundTripper) error {
		var err error
		allocs = testing.AllocsPerRun(2000, func() {
			if e := r.once(1); e != nil && err == nil {
				err = e
			}
		})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if allocs != 0 {
		t.Errorf("a round trip allocates %v times", allocs)
	}
}

// BenchmarkRoundTrip is the AM paper's round-trip benchmark (§5.1.1.1)
// between 2 goroutine PEs: 2L + 4o in LogP.
func BenchmarkRoundTrip(b *testing.B) {
	b.ReportAllocs()
	err := roundTrips(b, func(r *roundTripper) error {
		b.ResetTimer()
		for b.Loop() {
			if err := r.once(1); err != nil {
				return err
			}
		}
		b.StopTimer()
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkWakeUp is a round trip to a PE that has gone to sleep: PE 0
// computes for longer than a waiter spins before each request, so PE 1
// sleeps in its transport's Wait; what is timed is the wake-up and the
// round trip.
func BenchmarkWakeUp(b *testing.B) {
	err := roundTrips(b, func(r *roundTripper) error {
		var total time.Duration
		for b.Loop() {
			for t := time.Now(); time.Since(t) < 300*time.Microsecond; {
			}
			start := time.Now()
			if err := r.once(1); err != nil {
				return err
			}
			total += time.Since(start)
		}
		b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "ns/wakeup")
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}
