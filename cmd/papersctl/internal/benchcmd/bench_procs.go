package benchcmd

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ttlpapers/ttlpapers/baseline"
	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/base"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/papers"
)

// papersctl bench --procs N,...: the barrier and the NAND between N live
// processes on a shared-memory board (papersctl run's board), each count
// in turn, beside the baselines (package baseline) measured in the same
// invocation — MPI_Barrier with as many ranks, and the native Go spin
// barrier with as many goroutines — with the ratios. The processes are
// bench-pe's (bench_pe.go).

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
	// The baselines, same invocation (0 when absent).
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
func benchProcs(e *base.Env, counts []int, asJSON bool, maxTime time.Duration, tol float64) error {
	stdout, stderr := e.Stdout, e.Stderr
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
		return base.WriteJSON(stdout, rows)
	}
	printProcsTable(stdout, rows)
	return nil
}

// anchorNote says why the MPI anchor was skipped: the missing install's
// one line when MPI is absent, else the whole error.
func anchorNote(err error) error {
	if errors.Is(err, baseline.ErrAbsent) {
		return baseline.ErrAbsent
	}
	return err
}

// measureProcs runs n PE processes on a fresh shared board and returns
// what PE 0 measured.
func measureProcs(n int, maxTime time.Duration, tol float64, stderr io.Writer) ([]procsResult, error) {
	var rs []procsResult
	err := runPEs(n, false, []string{"--max-time", maxTime.String(), "--tolerance", strconv.FormatFloat(tol, 'g', -1, 64)}, stderr, &rs)
	if err == nil && len(rs) != len(procsOps) {
		err = fmt.Errorf("PE 0 reported %d of %d operations", len(rs), len(procsOps))
	}
	return rs, err
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
