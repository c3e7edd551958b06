// Package databench runs the seeds' data-network benchmarks on the
// emulator's goroutine PEs — Liu and Culler's Active Messages benchmarks
// (one-to-one, one-to-two, two-to-one, round trip, ring, block-transfer
// bandwidth against size), LogP's o, g and L derived from them as that
// paper derives them, and Luna's Libsplit-C microbenchmarks (read, write,
// get, put, store, bulk) — and puts the CM-5's figures beside ours.
// papersctl bench --data prints them; docs/datanet.md explains each row.
package databench

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/ttlpapers/ttlpapers/am"
	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/measure"
	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/papers"
)

// Row is one line of the results (one object of papersctl bench --data
// --json).
type Row struct {
	Op    string `json:"op"`
	PEs   int    `json:"pes"`
	Bytes int    `json:"bytes"`
	// Ours: µs per operation (per message for the message benchmarks),
	// and MB/s (10⁶ bytes) for the ones that move data.
	MeasuredUs   float64 `json:"measured_us,omitempty"`
	MeasuredMBps float64 `json:"measured_MBps,omitempty"`
	CI90Us       float64 `json:"measured_ci90_us,omitempty"`
	// The seed's figure for the same benchmark on the CM-5 (CMAM), and
	// where it is from.
	SeedUs   float64 `json:"seed_us,omitempty"`
	SeedMBps float64 `json:"seed_MBps,omitempty"`
	Seed     string  `json:"seed"`
	// MPI's figure for the nearest MPI operation, measured in the same
	// invocation, when it ran (AddMPI).
	MPIUs   float64 `json:"mpi_us,omitempty"`
	MPIMBps float64 `json:"mpi_MBps,omitempty"`
	MPIOp   string  `json:"mpi_op,omitempty"`
	// A plain Go TCP pair's figure (baseline.GoTCPData), with --tcp
	// (AddGoTCP).
	GoUs   float64 `json:"go_tcp_us,omitempty"`
	GoMBps float64 `json:"go_tcp_MBps,omitempty"`
}

// Options bound the run.
type Options struct {
	RingPEs   int           // PEs of the ring benchmark (at least 2)
	MaxTime   time.Duration // per benchmark
	Tolerance float64       // stop when the 90% CI is within this fraction of the mean
	Sizes     []int         // block and bulk sizes, bytes (multiples of 8)
	// Progress, if set, is told each benchmark's name as it starts.
	Progress func(name string)
	// PE, when set, is this process's PE of a program whose PEs are
	// processes (papersctl run's, mpirun's): every PE calls Run, the
	// benchmarks run on the program's PEs and their data network instead
	// of goroutine PEs, those needing more PEs than it has are left out,
	// the PEs a benchmark does not use wait in its barriers, and the rows
	// are PE 0's.
	PE *papers.PE
	// Net, when set, makes each goroutine PE's data network, once it has
	// checked in on the board (emulate.RunNet): papersctl bench --data
	// --tcp's TCP over loopback. Otherwise it is the in-process one.
	Net func(*papers.PE) (am.Transport, error)
}

// DefaultSizes are MPI's (baseline.MPIData): 64 B to 1 MiB by fours.
var DefaultSizes = []int{64, 256, 1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20}

// msgs is how many messages a repetition of a message benchmark sends per
// sender, as the AM paper's 1024.
const msgs = 1024

// rep is one PE's part of one repetition: PE 0 returns how long its timed
// part took.
type rep func() (time.Duration, error)

// run measures a benchmark on n PEs: setup makes each PE's rep; the PEs
// meet (polling barriers) before and after every repetition, and PE 0
// decides when the mean per op (perRep ops a repetition) has converged.
func run(ctx context.Context, o Options, n, perRep int, setup func(p *papers.PE, ep *am.Endpoint) (rep, error)) (measure.Result, error) {
	var res measure.Result
	body := func(p *papers.PE) error {
		ep, err := am.Of(p)
		if err != nil {
			return err
		}
		r, err := setup(p, ep) // on every PE: handlers and allocations are collective
		if err != nil {
			return err
		}
		// Collect now what the setups have left (a bulk benchmark's buffer
		// is up to 1 MiB), so that the collector does not run during the
		// repetitions, which allocate nothing: with 2 CPUs it took one from
		// the PEs (a 1 MiB put 57 µs, 26 with GOGC=off).
		runtime.GC()
		if p.Self() >= n {
			r = func() (time.Duration, error) { return 0, nil }
		}
		loop := measure.Loop{PerRep: perRep, Tolerance: o.Tolerance, MaxTime: o.MaxTime, LineUp: func() error { return am.Barrier(p) }}
		got, err := loop.Run(ctx, p, func() (time.Duration, error) {
			d, err := r()
			if err == nil {
				err = am.Barrier(p) // every answer is in
			}
			return d, err
		})
		if p.Self() == 0 {
			res = got
		}
		return err
	}
	if o.PE != nil {
		return res, body(o.PE)
	}
	if o.Net == nil {
		return res, emulate.Run(n, papers.Config{Context: ctx}, body)
	}
	b, err := emu.New(n)
	if err == nil {
		err = emulate.RunNet(b, n, papers.Config{Context: ctx}, o.Net, body)
	}
	return res, err
}

// counter is a handler that counts, and the count it waits for.
type counter struct {
	ep      *am.Endpoint
	n, want int
	h       am.HandlerID
	reached func() bool // made once: a closure per wait would allocate
}

func newCounter(ep *am.Endpoint) *counter {
	c := &counter{ep: ep}
	c.h = ep.Register(func(*am.Msg) { c.n++ })
	c.reached = func() bool { return c.n >= c.want }
	return c
}

// await waits until the count reaches want, then takes it off.
func (c *counter) await(op string, on, want int) error {
	c.want = want
	err := c.ep.Wait(op, on, c.reached)
	c.n -= want
	return err
}

// oneToMany: PE 0 sends msgs requests to each of PEs 1…n-1 in turn (the
// AM paper's one-to-one with n = 2, one-to-two with n = 3), and waits for
// each receiver's one acknowledgment that it has them all.
func oneToMany(ctx context.Context, o Options, n int) (measure.Result, error) {
	return run(ctx, o, n, msgs*(n-1), func(p *papers.PE, ep *am.Endpoint) (rep, error) {
		acks := newCounter(ep)
		got := 0
		hMsg := ep.Register(func(m *am.Msg) {
			if got++; got == msgs {
				got = 0
				m.Reply(acks.h, am.Args{})
			}
		})
		return func() (time.Duration, error) {
			if p.Self() != 0 {
				return 0, nil // answering from the barrier that follows
			}
			start := time.Now()
			for i := range msgs * (n - 1) {
				if err := ep.Request(1+i%(n-1), hMsg, am.Args{uint64(i)}); err != nil {
					return 0, err
				}
			}
			err := acks.await("acknowledgments", -1, n-1)
			return time.Since(start), err
		}, nil
	})
}

// twoToOne: PEs 1 and 2 each send msgs requests to PE 0, which times how
// long it takes to receive the 2·msgs (the AM paper's receive overhead,
// handler included).
func twoToOne(ctx context.Context, o Options) (measure.Result, error) {
	return run(ctx, o, 3, 2*msgs, func(p *papers.PE, ep *am.Endpoint) (rep, error) {
		c := newCounter(ep)
		return func() (time.Duration, error) {
			if p.Self() != 0 {
				for i := range msgs {
					if err := ep.Request(0, c.h, am.Args{uint64(i)}); err != nil {
						return 0, err
					}
				}
				return 0, nil
			}
			start := time.Now()
			err := c.await("messages", -1, 2*msgs)
			return time.Since(start), err
		}, nil
	})
}

// roundTrip: PE 0 requests, PE 1's handler replies, PE 0 waits: 2L + 4o.
func roundTrip(ctx context.Context, o Options) (measure.Result, error) {
	return run(ctx, o, 2, msgs, func(p *papers.PE, ep *am.Endpoint) (rep, error) {
		c := newCounter(ep)
		hReq := ep.Register(func(m *am.Msg) { m.Reply(c.h, m.Args) })
		return func() (time.Duration, error) {
			if p.Self() != 0 {
				return 0, nil
			}
			start := time.Now()
			for i := range msgs {
				if err := ep.Request(1, hReq, am.Args{uint64(i)}); err != nil {
					return 0, err
				}
				if err := c.await("reply", 1, 1); err != nil {
					return 0, err
				}
			}
			return time.Since(start), nil
		}, nil
	})
}

// ring: every PE sends msgs requests to its right neighbour while
// receiving msgs from its left, then polls until it has them (g + o).
func ring(ctx context.Context, o Options, n int) (measure.Result, error) {
	return run(ctx, o, n, msgs, func(p *papers.PE, ep *am.Endpoint) (rep, error) {
		c := newCounter(ep)
		right, left := (p.Self()+1)%n, (p.Self()+n-1)%n
		return func() (time.Duration, error) {
			start := time.Now()
			for i := range msgs {
				if err := ep.Request(right, c.h, am.Args{uint64(i)}); err != nil {
					return 0, err
				}
			}
			err := c.await("ring", left, msgs)
			return time.Since(start), err
		}, nil
	})
}

// Run runs every benchmark and returns the rows, the seed's figures beside
// ours (AddMPI adds MPI's).
func Run(ctx context.Context, o Options) ([]Row, error) {
	if o.PE != nil {
		o.RingPEs = o.PE.PEs()
	}
	if o.RingPEs < 2 {
		return nil, fmt.Errorf("databench: ring of %d PEs: use at least 2", o.RingPEs)
	}
	if len(o.Sizes) == 0 {
		o.Sizes = DefaultSizes
	}
	step := func(name string, f func() error) error {
		if ctx.Err() != nil {
			return nil
		}
		if o.Progress != nil {
			o.Progress(name)
		}
		return f()
	}
	rows, err := amRows(ctx, o, step)
	if err != nil {
		return rows, err
	}
	more, err := splitcRows(ctx, o, step)
	rows = append(rows, more...)
	if err != nil {
		return rows, err
	}
	more, err = xferRows(ctx, o, step)
	return append(rows, more...), err
}

// amRows runs the active-message benchmarks, each a step, the board's
// PEs allowing, and derives LogP's parameters from them when all four it
// needs ran.
func amRows(ctx context.Context, o Options, step func(string, func() error) error) ([]Row, error) {
	var rows []Row
	us := func(r measure.Result) float64 { return r.Mean / 1e3 }
	var oneOne, oneTwo, twoOne, rt, rg measure.Result
	for _, b := range []struct {
		name string
		pes  int
		res  *measure.Result
		f    func() (measure.Result, error)
		seed float64
	}{
		{"am-one-to-one", 2, &oneOne, func() (measure.Result, error) { return oneToMany(ctx, o, 2) }, 1.57},
		{"am-one-to-two", 3, &oneTwo, func() (measure.Result, error) { return oneToMany(ctx, o, 3) }, 1.49},
		{"am-two-to-one", 3, &twoOne, func() (measure.Result, error) { return twoToOne(ctx, o) }, 1.60},
		{"am-round-trip", 2, &rt, func() (measure.Result, error) { return roundTrip(ctx, o) }, 11.40},
		{"am-ring", o.RingPEs, &rg, func() (measure.Result, error) { return ring(ctx, o, o.RingPEs) }, 3.18},
	} {
		if o.PE != nil && b.pes > o.PE.PEs() {
			continue
		}
		err := step(b.name, func() error {
			r, err := b.f()
			if err != nil {
				return fmt.Errorf("%s: %w", b.name, err)
			}
			*b.res = r
			row := Row{Op: b.name, PEs: b.pes, Bytes: 8, MeasuredUs: us(r), CI90Us: r.CI90 / 1e3, SeedUs: b.seed,
				Seed: "Liu & Culler Table " + map[bool]string{true: "4 (CMAM_4)", false: "1 (CMAM_4, node 0 to node 1)"}[b.name == "am-ring"]}
			rows = append(rows, row)
			return nil
		})
		if err != nil {
			return rows, err
		}
	}
	if oneTwo.Kept > 0 && twoOne.Kept > 0 && rt.Kept > 0 && rg.Kept > 0 {
		rows = append(rows, logP(us(oneTwo), us(twoOne), us(rt), us(rg))...)
	}
	return rows, nil
}

// logP derives LogP's parameters from the message benchmarks as the AM
// paper does (§5.1.1.2.1, §5.1.2.1): the send overhead from one-to-two,
// the receive overhead from two-to-one, L from the round trip 2L + 4o
// less the overheads, and g from the ring, which measures g + o. The seed
// rows apply the same arithmetic to the CM-5's CMAM figures.
func logP(send, recv, rt, ring float64) []Row {
	derive := func(s, r, t, g float64) [4]float64 { return [4]float64{s, r, (t - 2*s - 2*r) / 2, g - r} }
	ours, seed := derive(send, recv, rt, ring), derive(1.49, 1.60, 11.40, 3.18)
	var rows []Row
	for i, name := range []string{"logp-o-send", "logp-o-recv", "logp-L", "logp-g"} {
		rows = append(rows, Row{Op: name, PEs: 2, Bytes: 8, MeasuredUs: ours[i], SeedUs: seed[i],
			Seed: "derived from Liu & Culler Tables 1 and 4 (CMAM) as §5.1 derives them"})
	}
	return rows
}

// AddMPI puts MPI's figures (baseline.MPIData's, by name) beside the rows
// whose nearest MPI operation they measure.
func AddMPI(rows []Row, mpi map[string]float64) {
	for i, r := range rows {
		name, what := nearest(r.Op, r.Bytes)
		v, ok := mpi[name]
		switch {
		case !ok:
		case strings.Contains(name, "_bw_"):
			rows[i].MPIMBps, rows[i].MPIOp = v, "datanet "+what
		default:
			rows[i].MPIUs, rows[i].MPIOp = v, "datanet "+what
		}
	}
}

// AddGoTCP puts a plain Go TCP pair's figures (baseline.GoTCPData's, named
// as MPI's) beside the rows they measure: papersctl bench --data --tcp.
func AddGoTCP(rows []Row, gos map[string]float64) {
	for i, r := range rows {
		name, _ := nearest(r.Op, r.Bytes)
		if r.Op == "am-one-to-one" || strings.HasPrefix(r.Op, "splitc-") {
			continue // the pair has no stream of sends or one-word gets
		}
		v, ok := gos[name]
		switch {
		case !ok:
		case strings.Contains(name, "_bw_"):
			rows[i].GoMBps = v
		default:
			rows[i].GoUs = v
		}
	}
}

// nearest is the name of the baselines' figure nearest a row's operation
// (of size bytes), and what it is.
func nearest(op string, size int) (name, what string) {
	switch op {
	case "am-one-to-one":
		return "send_us", "send_us"
	case "am-round-trip":
		return "round_trip_us", "round_trip_us"
	case "splitc-read":
		return "get_us", "get_us (flushed each time: blocking)"
	case "splitc-write":
		return "put_us", "put_us (flushed each time: blocking)"
	case "bulk-put", "strata-block-xfer":
		return fmt.Sprintf("put_bw_MBps size=%d", size), "put_bw_MBps (flushed)"
	case "bulk-get":
		return fmt.Sprintf("get_bw_MBps size=%d", size), "get_bw_MBps (flushed)"
	}
	return "", ""
}
