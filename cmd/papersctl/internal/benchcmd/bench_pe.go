package benchcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/base"
	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/databench"
	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/measure"
	"github.com/ttlpapers/ttlpapers/launch"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/spmd"
)

// The processes of bench --procs and bench --data --procs/--mpi are
// papersctl itself, run as the hidden command bench-pe: each is one PE of a
// shared-memory board (started by package launch) or one of mpirun's
// ranks, and PE 0 writes the results, as JSON, to a named pipe the parent
// made (named, not inherited: Open MPI's launcher closes the descriptors
// its ranks would inherit).

const benchPEName = "bench-pe"

// PECmd is papersctl bench-pe, one PE process that bench starts.
var PECmd = &base.Command{Name: benchPEName, Hidden: true, Summary: "one PE process of papersctl bench --procs or --data (started by bench)",
	Synopsis: "--report PIPE [flags]",
	About: "One PE of the processes papersctl bench --procs and --data --procs/--mpi start: it opens its PE\n" +
		"(spmd.Open), runs the benchmarks with the others, and PE 0 writes the results as JSON to --report.",
	New: func() base.Runner { return &benchPECmd{} }}

type benchPECmd struct {
	report  string
	data    bool
	maxTime time.Duration
	tol     float64
}

func (c *benchPECmd) Define(f *base.FlagSet) {
	f.String(&c.report, "report", "", "PIPE", nil, "where PE 0 writes the results: the named pipe the parent reads")
	f.Bool(&c.data, "data", "the data network's benchmarks (else the barrier and the NAND)")
	f.Duration(&c.maxTime, "max-time", 3*time.Second, false, "time cap per benchmark")
	f.Float(&c.tol, "tolerance", 0.1, 1, "stop when the 90% confidence interval is within this fraction of the mean")
}

func (c *benchPECmd) Check(*base.FlagSet, []string) error {
	if c.report == "" {
		return base.Usagef("--report: give the pipe PE 0 writes the results to (papersctl bench starts this command)")
	}
	return nil
}

func (c *benchPECmd) Run(e *base.Env, _ []string) error {
	p, err := spmd.Open()
	if err != nil {
		return err
	}
	var results any
	if c.data {
		results, err = databench.Run(e.Ctx, databench.Options{PE: p, MaxTime: c.maxTime, Tolerance: c.tol})
	} else {
		results, err = procsOnPE(e.Ctx, p, c.maxTime, c.tol)
	}
	if err == nil && p.Self() == 0 {
		err = writeReport(c.report, results)
	}
	if err != nil {
		spmd.Fail(p, err)
		return fmt.Errorf("PE %d: %w", p.Self(), err)
	}
	return spmd.Close(p)
}

func writeReport(path string, v any) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	err = json.NewEncoder(f).Encode(v)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// procsOnPE times each of procsOps on this PE's board; the rows are PE
// 0's.
func procsOnPE(ctx context.Context, p *papers.PE, maxTime time.Duration, tol float64) ([]procsResult, error) {
	const warm, k = 200, 500
	var rows []procsResult
	for _, op := range procsOps {
		rep := measure.Repeat(k, func() error { return op.run(p) })
		if _, err := measure.Repeat(warm, func() error { return op.run(p) })(); err != nil {
			return nil, err
		}
		var overhead time.Duration
		if p.Self() == 0 {
			overhead = measure.LoopOverhead(k)
		}
		r, err := measure.Loop{PerRep: k, Overhead: overhead, Tolerance: tol, MaxTime: maxTime}.Run(ctx, p, rep)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op.name, err)
		}
		rows = append(rows, procsResult{Procs: p.PEs(), Op: op.name, MeasuredNs: r.Mean, CI90Ns: r.CI90, Reps: r.Kept, Converged: r.Converged(tol)})
	}
	return rows, nil
}

// runPEs runs n bench-pe processes with args — on a fresh shared-memory
// board, or as mpirun's ranks when viaMPI — and decodes PE 0's report
// into v.
func runPEs(n int, viaMPI bool, args []string, stderr io.Writer, v any) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "papersctl-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	pipe := filepath.Join(dir, "report")
	r, w, err := openPipe(pipe)
	if err != nil {
		return err
	}
	defer r.Close()
	// Read as PE 0 writes (a pipe holds little); this end's own writer
	// keeps the reads waiting until the run is over, however PE 0 fares.
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(r)
		got <- b
	}()
	args = append([]string{benchPEName, "--report", pipe}, args...)
	runErr := runProcesses(self, n, viaMPI, args, stderr)
	w.Close()
	report := <-got
	switch {
	case runErr != nil:
		return runErr
	case len(report) == 0:
		return errors.New("PE 0 reported nothing")
	}
	return json.Unmarshal(report, v)
}

func runProcesses(self string, n int, viaMPI bool, args []string, stderr io.Writer) error {
	if !viaMPI {
		rep, err := launch.Run(context.Background(), launch.Config{N: n, Program: self, Args: args, Stdout: stderr, Stderr: stderr})
		if err == nil && rep.Failed >= 0 {
			err = fmt.Errorf("the run failed: %s", rep.Reason)
		}
		return err
	}
	if _, err := exec.LookPath("mpirun"); err != nil {
		return fmt.Errorf("--mpi: mpirun not found (apt-get install openmpi-bin): %w", err)
	}
	mpiArgs := []string{"--oversubscribe", "-np", strconv.Itoa(n)}
	if os.Geteuid() == 0 {
		mpiArgs = append(mpiArgs, "--allow-run-as-root")
	}
	cmd := exec.Command("mpirun", append(append(mpiArgs, self), args...)...)
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("mpirun -np %d: %w (a papersctl built without -tags mpi cannot run under mpirun: go build -tags mpi ./cmd/papersctl)", n, err)
	}
	return nil
}
