// Package benchcmd is papersctl bench, and bench-pe, the PE processes
// bench --procs and --data start.
package benchcmd

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/base"
	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/measure"
	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/progress"
	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/papers"
)

// Cmd is papersctl bench.
var Cmd = &base.Command{Name: "bench", Summary: "measure the aggregate operations and predict their cost with the seed's port timing",
	Synopsis: "[flags]", CatchSignals: true, Guest: true,
	About: "Measures each aggregate operation on the embedded emulator (docs/measurement.md: warm-up, loop overhead\n" +
		"subtracted, outliers dropped, repeated until the 90% confidence interval is within --tolerance\n" +
		"or --max-time) and predicts its time on the seed's hardware from its port-operation count.\n" +
		"Shows progress on a terminal; ^C prints the operations measured so far and exits 130.\n" +
		"Columns: docs/aggregates.md.",
	New: func() base.Runner { return &benchCmd{} }}

// benchOp is one operation papersctl bench measures.
type benchOp struct {
	name  string
	bytes int // bytes each PE receives per operation, for bandwidth; 0: none
	run   func(p *papers.PE, s *benchScratch) error
}

// benchScratch holds the buffers an operation reuses, so the timed loop
// does not allocate.
type benchScratch struct {
	gather []uint8
	slice  []byte
	in     []uint32
}

const sliceBytes = 64

func benchOps() []benchOp {
	return []benchOp{
		{"barrier", 0, func(p *papers.PE, _ *benchScratch) error { return p.Barrier() }},
		{"nand4", 0, func(p *papers.PE, _ *benchScratch) error { _, err := p.NAND(5); return err }},
		{"any", 0, func(p *papers.PE, _ *benchScratch) error { _, err := p.Any(p.Self() == 0); return err }},
		{"all", 0, func(p *papers.PE, _ *benchScratch) error { _, err := p.All(true); return err }},
		{"or4", 0, func(p *papers.PE, _ *benchScratch) error { _, err := p.OR4(3); return err }},
		{"vote", 0, func(p *papers.PE, _ *benchScratch) error { _, err := p.Vote(true); return err }},
		{"or8", 0, func(p *papers.PE, _ *benchScratch) error { _, err := papers.OR(p, uint8(p.Self())); return err }},
		{"or32", 0, func(p *papers.PE, _ *benchScratch) error { _, err := papers.OR(p, uint32(p.Self())); return err }},
		{"broadcast-byte", 1, func(p *papers.PE, _ *benchScratch) error { _, err := papers.Broadcast(p, 0, uint8(7)); return err }},
		{"broadcast-u32", 4, func(p *papers.PE, _ *benchScratch) error { _, err := papers.Broadcast(p, 0, uint32(7)); return err }},
		{"broadcast-u64", 8, func(p *papers.PE, _ *benchScratch) error { _, err := papers.Broadcast(p, 0, uint64(7)); return err }},
		{"broadcast-f64", 8, func(p *papers.PE, _ *benchScratch) error { _, err := papers.Broadcast(p, 0, 7.5); return err }},
		{fmt.Sprintf("broadcast-%dB", sliceBytes), sliceBytes, func(p *papers.PE, s *benchScratch) error { return p.BroadcastBytes(0, s.slice) }},
		{"gather-byte", 0, func(p *papers.PE, s *benchScratch) error { return papers.Gather(p, uint8(p.Self()), s.gather) }},
		{"permutation-u64", 8, func(p *papers.PE, _ *benchScratch) error {
			_, err := papers.Multicast(p, (p.Self()+1)%p.PEs(), uint64(p.Self()))
			return err
		}},
		{"multicast1-u64", 8, func(p *papers.PE, _ *benchScratch) error {
			_, err := papers.Multicast(p, 0, uint64(p.Self()))
			return err
		}},
		{"scatter-u32", 0, func(p *papers.PE, s *benchScratch) error { _, err := papers.Scatter(p, 0, s.in); return err }},
		{"reduce-sum-i32", 0, func(p *papers.PE, _ *benchScratch) error {
			_, err := papers.Reduce(p, papers.Sum, int32(p.Self()))
			return err
		}},
		{"reduce-sum-f64", 0, func(p *papers.PE, _ *benchScratch) error {
			_, err := papers.Reduce(p, papers.Sum, float64(p.Self()))
			return err
		}},
		{"reduce-max-i32", 0, func(p *papers.PE, _ *benchScratch) error {
			_, err := papers.Reduce(p, papers.Max, int32(p.Self()))
			return err
		}},
		{"reduce-max-f64", 0, func(p *papers.PE, _ *benchScratch) error {
			_, err := papers.Reduce(p, papers.Max, float64(p.Self()))
			return err
		}},
		{"reduce-or-u32", 0, func(p *papers.PE, _ *benchScratch) error {
			_, err := papers.Reduce(p, papers.BitOr, uint32(p.Self()))
			return err
		}},
		{"scan-sum-i32", 0, func(p *papers.PE, _ *benchScratch) error {
			_, err := papers.Scan(p, papers.Sum, int32(1), papers.Exclusive)
			return err
		}},
		{"scan-or-u32", 0, func(p *papers.PE, _ *benchScratch) error {
			_, err := papers.Scan(p, papers.BitOr, uint32(1)<<p.Self(), papers.Inclusive)
			return err
		}},
	}
}

// benchResult is one row of the output (and one object of --json).
type benchResult struct {
	Op   string  `json:"op"`
	PEs  int     `json:"pes"`
	NAND float64 `json:"nand_ops"`
	// PortOps is the port operations per PE per operation the emulated
	// port counted on PE 0 (polls while waiting included); MinPortOps the
	// protocol's count when no PE waits (2 per barrier, 1 more per NAND),
	// which the prediction uses.
	PortOps     float64 `json:"port_ops"`
	MinPortOps  float64 `json:"min_port_ops"`
	PredictedUs float64 `json:"predicted_us"`
	MeasuredNs  float64 `json:"measured_ns"`
	CI90Ns      float64 `json:"ci90_ns"`
	Reps        int     `json:"reps"`
	Dropped     int     `json:"dropped"`
	Converged   bool    `json:"converged"`
	// Stopped: ^C ended this operation's measurement early.
	Stopped bool `json:"stopped,omitempty"`
	// Bandwidth, for operations that move data: bytes each PE receives
	// per second, in kB/s (1000 bytes).
	Bytes         int     `json:"bytes,omitempty"`
	PredictedKBps float64 `json:"predicted_kBps,omitempty"`
	MeasuredKBps  float64 `json:"measured_kBps,omitempty"`
}

type benchCmd struct {
	pes           int
	json          bool
	portOpUs, tol float64
	maxTime       time.Duration
	ops           []benchOp
	procs         []int // --procs: live processes instead (bench_procs.go)
	data          bool  // --data: the data network instead (bench_data.go)
	mpi           int   // --mpi: with --data, as mpirun's ranks
	tcp           bool  // --tcp: with --data, on TCP (bench_data_tcp.go)
}

func (c *benchCmd) Define(f *base.FlagSet) {
	f.Int(&c.pes, "pes", 4, 1, lpt.MaxPEs, "number of PEs on the emulated board")
	f.Bool(&c.json, "json", "print a JSON list instead of a table")
	f.Float(&c.portOpUs, "port-op-us", 1.26, math.Inf(1), "time of one port operation for the prediction, µs (the seed's 486 ISA port: 1.26)")
	f.Duration(&c.maxTime, "max-time", 3*time.Second, false, "time cap per operation for the measurement")
	f.Float(&c.tol, "tolerance", 0.1, 1, "stop when the 90% confidence interval is within this fraction of the mean")
	c.ops = benchOps()
	f.String(new(string), "ops", "", "LIST", func(s string) (err error) {
		c.ops, err = selectOps(s)
		return err
	}, "comma-separated operations to run (default all: "+opNames()+")")
	f.NamesValue("ops")
	f.Func("procs", "LIST", func(s string) (err error) {
		c.procs, err = parseProcs(s)
		return err
	}, "instead, the barrier and the NAND between N processes on a shared-memory board, for each N of a list (e.g. 2,4,8), beside MPI_Barrier and the Go spin barrier with as many goroutines, measured in the same invocation")
	f.Bool(&c.data, "data", "instead, the data network: the Active Messages paper's benchmarks, LogP, and Libsplit-C's microbenchmarks, beside the CM-5's figures and MPI's between 2 ranks, measured in the same invocation (--pes: the ring's PEs; --procs N: between N processes on a shared-memory board; --mpi N: as N ranks under mpirun)")
	f.Int(&c.mpi, "mpi", 0, 2, lpt.MaxPEs, "with --data: run the benchmarks as N ranks under mpirun (papersctl built with -tags mpi)")

	f.Bool(&c.tcp, "tcp", "with --data: the goroutine PEs' data network is TCP over loopback, a real board's (am/tcpnet), instead of memory; MPI's figures are then Open MPI's over TCP, beside a plain Go TCP pair's, with the ratios")
}

func (c *benchCmd) Check(f *base.FlagSet, _ []string) error {
	var p base.Problems
	if c.data {
		for _, name := range []string{"ops", "port-op-us"} {
			if f.IsSet(name) {
				p.Addf("--%s: --data measures the data network: drop --%s or --data", name, name)
			}
		}
		switch {
		case len(c.procs) > 1 || len(c.procs) == 1 && c.procs[0] < 2:
			p.Addf("--procs: with --data, one process count of 2 or more (e.g. --procs 4)")
		case len(c.procs) > 0 && c.mpi > 0:
			p.Addf("--mpi and --procs: the processes run either under mpirun or on a shared-memory board: drop one")
		case f.IsSet("pes") && (len(c.procs) > 0 || c.mpi > 0):
			p.Addf("--pes: with --procs or --mpi every process is a PE: drop --pes")
		}
	} else if c.mpi > 0 {
		p.Addf("--mpi: only with --data")
	}
	c.tcpChecks(&p)
	if len(c.procs) > 0 && !c.data {
		for _, name := range []string{"pes", "ops", "port-op-us"} {
			if f.IsSet(name) {
				p.Addf("--%s: --procs measures the barrier and the NAND between live processes: drop --%s or --procs", name, name)
			}
		}
	}
	return p.Err()
}

// Run measures each operation in turn. ^C stops it: the operations measured
// so far are printed, the one under way with what it had (not converged).
func (c *benchCmd) Run(e *base.Env, _ []string) error {
	if c.data {
		procs := c.mpi
		if len(c.procs) > 0 {
			procs = c.procs[0]
		}
		benchDataNet = c.dataNet()
		return benchData(e, c.pes, c.json, c.maxTime, c.tol, procs, c.mpi > 0)
	}
	if len(c.procs) > 0 {
		return benchProcs(e, c.procs, c.json, c.maxTime, c.tol)
	}
	line := progress.New(e.Stderr)
	start := time.Now()
	var results []benchResult
	for i, op := range c.ops {
		line.Show("bench: %d/%d %s on %d PEs, %v (^C prints what is measured)", i+1, len(c.ops), op.name, c.pes, time.Since(start).Round(time.Second))
		r, err := measureOp(e.Ctx, op, c.pes, c.maxTime, c.tol)
		if err != nil && e.Ctx.Err() == nil {
			line.Clear()
			return fmt.Errorf("%s: %w", op.name, err)
		}
		r.Stopped = e.Ctx.Err() != nil
		if r.Reps > 0 {
			results = append(results, c.finish(op, r))
		}
		if e.Ctx.Err() != nil {
			break
		}
	}
	line.Clear()
	var err error
	if c.json {
		err = base.WriteJSON(e.Stdout, results)
	} else {
		err = printBenchTable(e.Stdout, results, c.portOpUs)
	}
	if err == nil {
		err = e.Ctx.Err()
	}
	return err
}

// finish adds the prediction and the bandwidths to a measured result.
func (c *benchCmd) finish(op benchOp, r benchResult) benchResult {
	r.PredictedUs = r.MinPortOps * c.portOpUs
	if op.bytes > 0 {
		r.Bytes = op.bytes
		r.PredictedKBps = float64(op.bytes) / r.PredictedUs * 1e3
		if r.MeasuredNs > 0 {
			r.MeasuredKBps = float64(op.bytes) / r.MeasuredNs * 1e6
		}
	}
	return r
}

func opNames() string {
	var names []string
	for _, op := range benchOps() {
		names = append(names, op.name)
	}
	return strings.Join(names, ",")
}

// selectOps reads --ops: known names, each once.
func selectOps(list string) ([]benchOp, error) {
	all := benchOps()
	var ops []benchOp
	for _, name := range strings.Split(list, ",") {
		i := slices.IndexFunc(all, func(op benchOp) bool { return op.name == name })
		var known []string
		for _, op := range all {
			known = append(known, op.name)
		}
		switch {
		case i < 0:
			return nil, fmt.Errorf("unknown operation %q%s (known: %s)", name, base.Suggest(name, known, ""), opNames())
		case slices.ContainsFunc(ops, func(op benchOp) bool { return op.name == name }):
			return nil, fmt.Errorf("operation %q given twice", name)
		}
		ops = append(ops, all[i])
	}
	return ops, nil
}

// opsCounter is the emulated port's operation counter.
type opsCounter interface{ Ops() uint64 }

// measureOp runs op on an emulated board of n PEs: it counts NANDs and port
// operations over a fixed run, then times repetitions on PE 0 (docs/measurement.md:
// warm-up, loop overhead subtracted, first repetition discarded, outliers
// dropped, until the 90% CI is within tol of the mean or maxTime is up).
// Every PE runs the same loop; PE 0 decides when to stop and tells the
// others with an ANY outside the timed region.
func measureOp(ctx context.Context, op benchOp, n int, maxTime time.Duration, tol float64) (benchResult, error) {
	res := benchResult{Op: op.name, PEs: n}
	err := emulate.Run(n, papers.Config{}, func(p *papers.PE) error {
		s := &benchScratch{gather: make([]uint8, n), slice: make([]byte, sliceBytes), in: make([]uint32, n)}
		// Warm up, and find a repetition length of about 2 ms on PE 0.
		const warm = 20
		start := time.Now()
		for range warm {
			if err := op.run(p, s); err != nil {
				return err
			}
		}
		per := time.Since(start) / warm
		k, err := papers.Broadcast(p, 0, uint32(max(1, min(2*time.Millisecond/max(per, 1), 10000))))
		if err != nil {
			return err
		}
		rep := measure.Repeat(int(k), func() error { return op.run(p, s) })
		// Count over one repetition.
		ctr, _ := p.Port().(opsCounter)
		st0, ops0 := p.Stats(), portOps(ctr)
		if _, err := rep(); err != nil {
			return err
		}
		st1, ops1 := p.Stats(), portOps(ctr)
		var overhead time.Duration
		if p.Self() == 0 {
			res.NAND = float64(st1.NANDs-st0.NANDs) / float64(k)
			res.MinPortOps = float64(2*(st1.Barriers-st0.Barriers)+st1.NANDs-st0.NANDs) / float64(k)
			res.PortOps = float64(ops1-ops0) / float64(k)
			overhead = measure.LoopOverhead(int(k))
		}
		loop := measure.Loop{PerRep: int(k), Overhead: overhead, Tolerance: tol, MaxTime: maxTime}
		r, err := loop.Run(ctx, p, rep)
		if p.Self() == 0 {
			res.MeasuredNs, res.CI90Ns, res.Reps, res.Dropped = r.Mean, r.CI90, r.Kept, r.Dropped
			res.Converged = r.Converged(tol)
		}
		return err
	})
	return res, err
}

func portOps(c opsCounter) uint64 {
	if c == nil {
		return 0
	}
	return c.Ops()
}

func printBenchTable(w io.Writer, results []benchResult, portOpUs float64) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "operation\tPEs\tNANDs\tport ops\tport ops\tpredicted\tmeasured (emulator)\t90%% CI\tpredicted\tmeasured\t\n")
	fmt.Fprintf(tw, "\t\t\t(no wait)\t(PE 0)\tµs @ %.2f µs/op\tµs\t\tkB/s per PE\tkB/s per PE\t\n", portOpUs)
	for _, r := range results {
		ci := fmt.Sprintf("±%.0f%%", 100*r.CI90Ns/r.MeasuredNs)
		switch {
		case r.Stopped:
			ci += " (stopped)"
		case !r.Converged:
			ci += " (cap)"
		}
		bw, mbw := "", ""
		if r.Bytes > 0 {
			bw, mbw = fmt.Sprintf("%.1f", r.PredictedKBps), fmt.Sprintf("%.1f", r.MeasuredKBps)
		}
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.0f\t%.1f\t%.1f\t%.1f\t%s\t%s\t%s\t\n",
			r.Op, r.PEs, r.NAND, r.MinPortOps, r.PortOps, r.PredictedUs, r.MeasuredNs/1e3, ci, bw, mbw)
	}
	return tw.Flush()
}
