package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/ttlpapers/ttlpapers/baseline"
	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/measure"
	"github.com/ttlpapers/ttlpapers/launch"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/spmd"
)

// papersctl bench --procs N,...: the barrier and the NAND between N live
// processes on a shared-memory board (papersctl run's board), each count
// in turn, beside the baselines (package baseline) measured in the same
// invocation — Open MPI's MPI_Barrier with as many ranks, and the native
// Go spin barrier with as many goroutines — with the ratios.
//
// The PE processes are papersctl itself, started by the launcher with
// envBenchPE set: it measures by the method of docs/measurement.md and PE 0 prints
// one JSON line per operation.

const envBenchPE = "PAPERSCTL_BENCH_PE" // "maxTime tolerance" for a PE process

func init() {
	if v := os.Getenv(envBenchPE); v != "" {
		os.Exit(benchPE(v))
	}
}

// mpiBaseline and mpiDataBaseline measure MPI's figures (the tests leave
// them out).
var (
	mpiBaseline     = baseline.MPI
	mpiDataBaseline = baseline.MPIData
)

// procsResult is one row of bench --procs (and one object of --json).
type procsResult struct {
	Procs      int     `json:"procs"`
	Op         string  `json:"op"`
	MeasuredNs float64 `json:"measured_ns"`
	CI90Ns     float64 `json:"ci90_ns"`
	Reps       int     `json:"reps"`
	Converged  bool    `json:"converged"`
	// The anchors, same invocation (0 when absent).
	MPIBarrierNs float64 `json:"mpi_barrier_ns,omitempty"`
	RatioMPI     float64 `json:"ratio_mpi,omitempty"` // measured / MPI_Barrier
	GoSpinNs     float64 `json:"go_spin_ns,omitempty"`
}

// procsOps are the operations bench --procs measures.
var procsOps = []struct {
	name string
	run  func(p *papers.PE) error
}{
	{"barrier", func(p *papers.PE) error { return p.Barrier() }},
	{"nand4", func(p *papers.PE) error { _, err := p.NAND(uint8(p.Self()) & lpt.DataMask); return err }},
}

// parseProcs reads the --procs list: process counts from 1 to lpt.MaxPEs.
func parseProcs(list string) ([]int, error) {
	var ns []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > lpt.MaxPEs {
			return nil, fmt.Errorf("give process counts from 1 to %d, e.g. --procs 2,4,8", lpt.MaxPEs)
		}
		ns = append(ns, n)
	}
	return ns, nil
}

// benchProcs runs bench --procs for each process count and prints the
// table or JSON.
func benchProcs(e *env, counts []int, asJSON bool, maxTime time.Duration, tol float64) error {
	stdout, stderr := e.stdout, e.stderr
	defer baseline.Cleanup()
	var rows []procsResult
	for _, n := range counts {
		rs, err := measureProcs(n, maxTime, tol, stderr)
		if err != nil {
			return fmt.Errorf("%d processes: %w", n, err)
		}
		mpi, merr := mpiBaseline(n, false)
		if merr != nil {
			fmt.Fprintf(stderr, "papersctl bench: anchor skipped: %v\n", anchorNote(merr))
		}
		g := baseline.Go(n)
		for i := range rs {
			if merr == nil {
				rs[i].MPIBarrierNs, rs[i].RatioMPI = mpi.Barrier*1e3, rs[i].MeasuredNs/(mpi.Barrier*1e3)
			}
			rs[i].GoSpinNs = g.Spin * 1e3
		}
		rows = append(rows, rs...)
	}
	if asJSON {
		return writeJSON(stdout, rows)
	}
	printProcsTable(stdout, rows)
	return nil
}

func anchorNote(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// measureProcs runs n PE processes on a fresh shared board and returns
// what PE 0 measured.
func measureProcs(n int, maxTime time.Duration, tol float64, stderr io.Writer) ([]procsResult, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	out := &pe0Lines{}
	rep, err := launch.Run(context.Background(), launch.Config{N: n, Program: self, Stdout: out, Stderr: stderr,
		Env: []string{fmt.Sprintf("%s=%s %g", envBenchPE, maxTime, tol)}})
	if err != nil {
		return nil, err
	}
	if rep.Failed >= 0 {
		return nil, fmt.Errorf("the run failed: %s", rep.Reason)
	}
	var rs []procsResult
	for _, line := range out.lines {
		var r procsResult
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, fmt.Errorf("PE 0 printed %q: %v", line, err)
		}
		rs = append(rs, r)
	}
	if len(rs) != len(procsOps) {
		return nil, fmt.Errorf("PE 0 reported %d of %d operations", len(rs), len(procsOps))
	}
	return rs, nil
}

// pe0Lines keeps the lines PE 0 prints (the launcher prefixes each with
// its PE).
type pe0Lines struct {
	mu    sync.Mutex
	lines []string
}

func (w *pe0Lines) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "[PE 0] "); ok {
			w.lines = append(w.lines, rest)
		}
	}
	return len(b), nil
}

// benchPE is a PE process of bench --procs: it times each operation on
// the board the launcher gave it; PE 0 prints the results.
func benchPE(params string) int {
	var maxTime time.Duration
	var tol float64
	ms, ts, _ := strings.Cut(params, " ")
	maxTime, err := time.ParseDuration(ms)
	if err == nil {
		tol, err = strconv.ParseFloat(ts, 64)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "papersctl bench PE: bad %s=%q\n", envBenchPE, params)
		return 2
	}
	p, err := spmd.Open()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for _, op := range procsOps {
		r, err := timeOnPE(p, op.run, maxTime, tol)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if p.Self() == 0 {
			r.Procs, r.Op = p.PEs(), op.name
			line, _ := json.Marshal(r)
			fmt.Println(string(line))
		}
	}
	if err := spmd.Close(p); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// timeOnPE times op on every PE by the method of docs/measurement.md: warm-up, then
// repetitions of k operations lined up by a barrier, until PE 0's sampler
// is done (it tells the others with an ANY, outside the timed part).
func timeOnPE(p *papers.PE, op func(*papers.PE) error, maxTime time.Duration, tol float64) (procsResult, error) {
	const warm, k = 200, 500
	for range warm {
		if err := op(p); err != nil {
			return procsResult{}, err
		}
	}
	var smp *measure.Sampler
	if p.Self() == 0 {
		smp = measure.New(k, measure.LoopOverhead(k), tol, maxTime)
	}
	for {
		if err := p.Barrier(); err != nil {
			return procsResult{}, err
		}
		start := time.Now()
		for range k {
			if err := op(p); err != nil {
				return procsResult{}, err
			}
		}
		done := false
		if smp != nil {
			smp.Add(time.Since(start))
			done = smp.Done()
		}
		done, err := p.Any(done)
		if err != nil || !done {
			if err != nil {
				return procsResult{}, err
			}
			continue
		}
		var r procsResult
		if smp != nil {
			res := smp.Result()
			r = procsResult{MeasuredNs: res.Mean, CI90Ns: res.CI90, Reps: res.Kept, Converged: res.Converged(tol)}
		}
		return r, nil
	}
}

func printProcsTable(w io.Writer, rows []procsResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "processes\toperation\tmeasured µs\t90%% CI\tMPI_Barrier µs\tmeasured / MPI\tGo spin barrier µs\t\n")
	cell := func(v float64, format string) string {
		if v == 0 {
			return "—"
		}
		return fmt.Sprintf(format, v)
	}
	for _, r := range rows {
		ci := fmt.Sprintf("±%.0f%%", 100*r.CI90Ns/r.MeasuredNs)
		if !r.Converged {
			ci += " (cap)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%.2f\t%s\t%s\t%s\t%s\t\n", r.Procs, r.Op, r.MeasuredNs/1e3, ci,
			cell(r.MPIBarrierNs/1e3, "%.2f"), cell(r.RatioMPI, "%.2f×"), cell(r.GoSpinNs/1e3, "%.2f"))
	}
	tw.Flush()
}
