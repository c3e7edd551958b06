package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/databench"
	"github.com/ttlpapers/ttlpapers/launch"
	"github.com/ttlpapers/ttlpapers/spmd"
)

// papersctl bench --data --procs N and --data --mpi N: the data network's
// benchmarks between N processes — on papersctl run's shared-memory board
// and data network, or as mpirun's ranks on MPI's — instead of goroutine
// PEs. The PE processes are papersctl itself, started with
// envBenchDataPE holding the bounds and the MPI anchor's figures (measured
// first, in this invocation); PE 0 prints the rows on one line after
// rowsMark.

const (
	envBenchDataPE = "PAPERSCTL_BENCH_DATA_PE"
	rowsMark       = "papersctl-bench-data-rows "
)

type benchDataParams struct {
	MaxTime   time.Duration      `json:"max_time"`
	Tolerance float64            `json:"tolerance"`
	MPI       map[string]float64 `json:"mpi,omitempty"`
}

func init() {
	if v := os.Getenv(envBenchDataPE); v != "" {
		os.Exit(benchDataPE(v))
	}
}

// benchDataProcs runs the PEs (under mpirun when viaMPI) and returns PE
// 0's rows.
func benchDataProcs(n int, viaMPI bool, params benchDataParams, stderr io.Writer) ([]databench.Row, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	b, _ := json.Marshal(params)
	env := envBenchDataPE + "=" + string(b)
	out := &pe0Lines{}
	if viaMPI {
		if _, err := exec.LookPath("mpirun"); err != nil {
			return nil, fmt.Errorf("--mpi: mpirun not found (apt-get install openmpi-bin): %w", err)
		}
		args := []string{"--oversubscribe", "-np", strconv.Itoa(n), "-x", env}
		if os.Geteuid() == 0 {
			args = append(args, "--allow-run-as-root")
		}
		cmd := exec.Command("mpirun", append(args, self)...)
		cmd.Stderr = stderr
		raw, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("mpirun -np %d: %w (a papersctl built without -tags mpi cannot run under mpirun: go build -tags mpi ./cmd/papersctl)", n, err)
		}
		out.lines = strings.Split(string(raw), "\n")
	} else {
		rep, err := launch.Run(context.Background(), launch.Config{N: n, Program: self, Stdout: out, Stderr: stderr, Env: []string{env}})
		if err != nil {
			return nil, err
		}
		if rep.Failed >= 0 {
			return nil, fmt.Errorf("the run failed: %s", rep.Reason)
		}
	}
	for _, line := range out.lines {
		if rest, ok := strings.CutPrefix(line, rowsMark); ok {
			var rows []databench.Row
			err := json.Unmarshal([]byte(rest), &rows)
			return rows, err
		}
	}
	return nil, errors.New("PE 0 printed no rows")
}

// benchDataPE is one PE process of bench --data --procs or --mpi.
func benchDataPE(v string) int {
	var params benchDataParams
	if err := json.Unmarshal([]byte(v), &params); err != nil {
		fmt.Fprintf(os.Stderr, "papersctl bench PE: bad %s=%q: %v\n", envBenchDataPE, v, err)
		return 2
	}
	p, err := spmd.Open()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	rows, err := databench.Run(context.Background(), databench.Options{PE: p, MaxTime: params.MaxTime, Tolerance: params.Tolerance}, params.MPI)
	if err != nil {
		fmt.Fprintf(os.Stderr, "papersctl bench: PE %d: %v\n", p.Self(), err)
		spmd.Fail(p, err)
		return 1
	}
	if p.Self() == 0 {
		b, _ := json.Marshal(rows)
		fmt.Println(rowsMark + string(b))
		os.Stdout.Sync()
	}
	if err := spmd.Close(p); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
