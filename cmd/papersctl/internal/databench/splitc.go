package databench

import (
	"context"
	"fmt"
	"time"

	"github.com/ttlpapers/ttlpapers/am"
	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/measure"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/splitc"
	"github.com/ttlpapers/ttlpapers/strata"
)

// gmOps is how many operations a repetition of a Libsplit-C
// microbenchmark runs.
const gmOps = 1024

// splitcRows measures Luna's global-memory microbenchmarks between 2 PEs
// (§5.1: read and write block, so they pay a round trip; get and put are
// pipelined and then synced, so they pay the overheads; a store pays the
// send overhead only) and the bulk operations' bandwidth against size
// (§5.2). The seed's figures are Table 4's CMAM column.
func splitcRows(ctx context.Context, o Options, step func(string, func() error) error) ([]Row, error) {
	var rows []Row
	for _, b := range gmBenches {
		err := step(b.name, func() error {
			row, err := gmRow(ctx, o, b)
			if err != nil {
				return fmt.Errorf("%s: %w", b.name, err)
			}
			rows = append(rows, row)
			return nil
		})
		if err != nil {
			return rows, err
		}
	}
	for _, op := range []string{"read", "write", "get", "put", "store"} {
		for _, size := range o.Sizes {
			name := fmt.Sprintf("bulk-%s", op)
			err := step(fmt.Sprintf("%s %d B", name, size), func() error {
				r, err := bulk(ctx, o, op, size)
				if err != nil {
					return fmt.Errorf("%s %d B: %w", name, size, err)
				}
				row := Row{Op: name, PEs: 2, Bytes: size, MeasuredUs: r.Mean / 1e3, CI90Us: r.CI90 / 1e3, MeasuredMBps: float64(size) / (r.Mean / 1e3),
					Seed: "Luna §5.2: the CM-5 peaks at about 10 MB/s, half of it at about 50 bytes"}
				if size >= 4<<10 {
					row.SeedMBps = 10
				}
				rows = append(rows, row)
				return nil
			})
			if err != nil {
				return rows, err
			}
		}
	}
	return rows, nil
}

// gmBench is one of Luna's global-memory microbenchmarks: op from PE 0 to
// a word of PE 1, then end (the sync of the split-phase forms), if any.
type gmBench struct {
	name string
	seed float64 // Table 4's CMAM figure, µs
	op   func(m *splitc.Memory, g splitc.Global[float64], x *float64) error
	end  func(m *splitc.Memory) error
}

var gmBenches = []gmBench{
	{"splitc-read", 14.0, func(m *splitc.Memory, g splitc.Global[float64], x *float64) (err error) {
		*x, err = splitc.Read(m, g)
		return err
	}, nil},
	{"splitc-write", 13.4, func(m *splitc.Memory, g splitc.Global[float64], x *float64) error {
		return splitc.Write(m, g, 1)
	}, nil},
	{"splitc-get", 4.4, func(m *splitc.Memory, g splitc.Global[float64], x *float64) error {
		return splitc.Get(m, x, g)
	}, splitc.Sync},
	{"splitc-put", 4.1, func(m *splitc.Memory, g splitc.Global[float64], x *float64) error {
		return splitc.Put(m, g, 2)
	}, splitc.Sync},
	{"splitc-store", 2.1, func(m *splitc.Memory, g splitc.Global[float64], x *float64) error {
		return splitc.Store(m, g, 3)
	}, nil},
}

// gmRow measures one microbenchmark: gmOps operations a repetition.
func gmRow(ctx context.Context, o Options, b gmBench) (Row, error) {
	r, err := run(ctx, o, 2, gmOps, func(p *papers.PE, ep *am.Endpoint) (rep, error) {
		m, err := splitc.Attach(p)
		if err != nil {
			return nil, err
		}
		s, err := splitc.AllSpreadMalloc[float64](m, 2)
		if err != nil {
			return nil, err
		}
		g := s.At(1)
		var x float64
		return func() (time.Duration, error) {
			if p.Self() != 0 {
				return 0, nil
			}
			start := time.Now()
			for range gmOps {
				if err := b.op(m, g, &x); err != nil {
					return 0, err
				}
			}
			if b.end != nil {
				if err := b.end(m); err != nil {
					return 0, err
				}
			}
			return time.Since(start), nil
		}, nil
	})
	if err != nil {
		return Row{}, err
	}
	return Row{Op: b.name, PEs: 2, Bytes: 8, MeasuredUs: r.Mean / 1e3, CI90Us: r.CI90 / 1e3, SeedUs: b.seed, Seed: "Luna Table 4 (CMAM)"}, nil
}

// bulkBytes is about how many bytes a repetition of a bulk benchmark
// moves, in at least 8 operations: operations of one size run back to
// back, as MPI's puts in baseline.MPIData do, so that they are not timed one by one
// against the clock and the barriers around them (a 1 MiB put alone
// between barriers took 21 to 60 µs, in a row 22).
const bulkBytes = 256 << 10

// bulk times bulk operations of size bytes from PE 0 to PE 1, each to
// completion (stores: until the receiver has counted the bytes).
func bulk(ctx context.Context, o Options, op string, size int) (measure.Result, error) {
	ops := max(8, bulkBytes/size)
	return run(ctx, o, 2, ops, func(p *papers.PE, ep *am.Endpoint) (rep, error) {
		m, err := splitc.Attach(p)
		if err != nil {
			return nil, err
		}
		words := size / 8
		s, err := splitc.AllSpreadMalloc[uint64](m, 2*words)
		if err != nil {
			return nil, err
		}
		// The buffer starts 16 bytes past a page, as datanet.c's malloc'd
		// one does: Go's is page-aligned, like the window's parts, and a
		// copy between addresses equal modulo 4 KiB runs at less than half
		// speed (4K aliasing: a 4 KiB MPI_Put 0.18 µs against 0.07).
		buf := make([]uint64, words+2)[2:]
		g := s.At(1)
		done := newCounter(ep)
		return func() (time.Duration, error) {
			if p.Self() == 1 {
				if op != "store" {
					return 0, nil
				}
				if err := splitc.StoreSync(m, ops*size); err != nil {
					return 0, err
				}
				return 0, ep.Request(0, done.h, am.Args{})
			}
			start := time.Now()
			var err error
			for range ops {
				switch op {
				case "read":
					err = splitc.BulkRead(m, buf, g)
				case "write":
					err = splitc.BulkWrite(m, g, buf)
				case "get":
					if err = splitc.BulkGet(m, buf, g); err == nil {
						err = splitc.Sync(m)
					}
				case "put":
					if err = splitc.BulkPut(m, g, buf); err == nil {
						err = splitc.Sync(m)
					}
				case "store":
					err = splitc.BulkStore(m, g, buf)
				}
				if err != nil {
					return 0, err
				}
			}
			if op == "store" {
				err = done.await("store_sync", 1, 1)
			}
			return time.Since(start), err
		}, nil
	})
}

// xferRows measures Strata's block transfer, one-to-one and blocking (the
// AM paper's §5.2.1: until the receiver acknowledges the whole block), for
// each size, and fits T = c + x/B over them as that paper fits its Table
// 5. The seed's figures are CMAM_xfer's double-word-aligned line of Table
// 5 (start-up 21.1 µs, 10.11 MB/s), evaluated at each size.
func xferRows(ctx context.Context, o Options, step func(string, func() error) error) ([]Row, error) {
	const c0, b0 = 21.1, 10.11
	var rows []Row
	var xs, ts []float64
	for _, size := range o.Sizes {
		err := step(fmt.Sprintf("xfer %d B", size), func() error {
			r, err := xfer(ctx, o, size)
			if err != nil {
				return fmt.Errorf("xfer %d B: %w", size, err)
			}
			t := r.Mean / 1e3
			seedT := c0 + float64(size)/b0
			row := Row{Op: "strata-block-xfer", PEs: 2, Bytes: size, MeasuredUs: t, CI90Us: r.CI90 / 1e3, MeasuredMBps: float64(size) / t,
				SeedUs: seedT, SeedMBps: float64(size) / seedT, Seed: "Liu & Culler Table 5, CMAM_xfer blocking, double-word: T = 21.1 µs + x / 10.11 MB/s"}
			rows = append(rows, row)
			xs, ts = append(xs, float64(size)), append(ts, t)
			return nil
		})
		if err != nil {
			return rows, err
		}
	}
	if len(xs) >= 2 {
		c, b := fit(xs, ts)
		rows = append(rows, Row{Op: "strata-block-xfer-fit", PEs: 2, MeasuredUs: c, MeasuredMBps: b, SeedUs: c0, SeedMBps: b0,
			Seed: "Liu & Culler Table 5 (CMAM_xfer, double-word): start-up cost (µs) and bandwidth of T = c + x/B, least squares"})
	}
	return rows, nil
}

// fit returns the least-squares c and B of t = c + x/B (x bytes, t µs; B
// in MB/s).
func fit(xs, ts []float64) (c, b float64) {
	var sx, st, sxx, sxt float64
	for i := range xs {
		sx, st, sxx, sxt = sx+xs[i], st+ts[i], sxx+xs[i]*xs[i], sxt+xs[i]*ts[i]
	}
	n := float64(len(xs))
	slope := (n*sxt - sx*st) / (n*sxx - sx*sx)
	return (st - slope*sx) / n, 1 / slope
}

// xfer times one block transfer of size bytes to a port whose handler
// acknowledges the whole block.
func xfer(ctx context.Context, o Options, size int) (measure.Result, error) {
	return run(ctx, o, 2, 1, func(p *papers.PE, ep *am.Endpoint) (rep, error) {
		s, err := strata.Init(p)
		if err != nil {
			return nil, err
		}
		words := size / 4
		buf := make([]strata.Word, words)
		ack := newCounter(ep)
		arrived := false
		port := s.Port(1)
		port.Base, port.Count = make([]strata.Word, words), words
		port.Handler = func(*strata.S, [4]strata.Word) { arrived = true }
		return func() (time.Duration, error) {
			if p.Self() == 1 {
				if err := ep.Wait("block", 0, func() bool { return arrived }); err != nil {
					return 0, err
				}
				arrived, port.Count = false, words // ready for the next block
				return 0, ep.Request(0, ack.h, am.Args{})
			}
			start := time.Now()
			if err := s.SendBlockXferPollBoth(1, 1, 0, buf); err != nil {
				return 0, err
			}
			err := ack.await("block acknowledgment", 1, 1)
			return time.Since(start), err
		}, nil
	})
}
