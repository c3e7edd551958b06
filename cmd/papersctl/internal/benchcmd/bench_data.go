package benchcmd

import (
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/ttlpapers/ttlpapers/baseline"
	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/base"
	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/databench"
	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/progress"
)

// benchData is papersctl bench --data: the data network's benchmarks
// (package databench) with MPI's figures (package baseline's datanet.c)
// measured in the same invocation (or a note saying why not); with procs
// > 0, between that many processes (bench-pe's, bench_pe.go), under
// mpirun when viaMPI.
func benchData(e *base.Env, ringPEs int, asJSON bool, maxTime time.Duration, tol float64, procs int, viaMPI bool) error {
	if ringPEs < 2 && procs == 0 {
		return fmt.Errorf("--pes %d: the ring needs at least 2 PEs", ringPEs)
	}
	line := progress.New(e.Stderr)
	tcp := benchDataNet != nil
	line.Show("bench: the MPI anchor (datanet.c, 2 ranks%s)", map[bool]string{true: ", over TCP"}[tcp])
	defer baseline.Cleanup()
	mpi, merr := mpiDataBaseline(tcp)
	var gos map[string]float64
	var gerr error
	if tcp {
		line.Show("bench: a plain Go TCP pair (baseline.GoTCPData, 3 rounds)")
		gos, gerr = baseline.GoTCPData(databench.DefaultSizes, 3, time.Minute)
	}
	start := time.Now()
	var rows []databench.Row
	var err error
	if procs > 0 {
		line.Show("bench: the data network between %d processes", procs)
		err = runPEs(procs, viaMPI, []string{"--data", "--max-time", maxTime.String(), "--tolerance", strconv.FormatFloat(tol, 'g', -1, 64)}, e.Stderr, &rows)
	} else {
		rows, err = databench.Run(e.Ctx, databench.Options{RingPEs: ringPEs, MaxTime: maxTime, Tolerance: tol, Net: benchDataNet,
			Progress: func(name string) {
				line.Show("bench: %s, %v (^C prints what is measured)", name, time.Since(start).Round(time.Second))
			}})
	}
	databench.AddMPI(rows, mpi)
	databench.AddGoTCP(rows, gos)
	line.Clear()
	if merr != nil {
		fmt.Fprintf(e.Stderr, "papersctl bench: no MPI figures beside ours: %v\n", merr)
	}
	if gerr != nil {
		fmt.Fprintf(e.Stderr, "papersctl bench: no plain Go TCP figures beside ours: %v\n", gerr)
	}
	if err != nil && e.Ctx.Err() == nil {
		return err
	}
	if asJSON {
		err = base.WriteJSON(e.Stdout, rows)
	} else {
		err = printDataTable(e, rows, tcp)
	}
	if err == nil {
		err = e.Ctx.Err()
	}
	return err
}

func printDataTable(e *base.Env, rows []databench.Row, tcp bool) error {
	tw := tabwriter.NewWriter(e.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "operation\tPEs\tbytes\tours µs\t90% CI\tCM-5 µs\tours MB/s\tCM-5 MB/s\tMPI µs\tMPI MB/s\t"
	if tcp {
		head += "÷MPI\tGo TCP µs\tGo TCP MB/s\t÷Go\t"
	}
	fmt.Fprintln(tw, head)
	num := func(v float64, f string) string {
		if v == 0 {
			return ""
		}
		return fmt.Sprintf(f, v)
	}
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t", r.Op, r.PEs, num(float64(r.Bytes), "%.0f"),
			num(r.MeasuredUs, "%.3f"), num(r.CI90Us, "±%.3f"), num(r.SeedUs, "%.2f"), num(r.MeasuredMBps, "%.1f"),
			num(r.SeedMBps, "%.2f"), num(r.MPIUs, "%.3f"), num(r.MPIMBps, "%.0f"))
		if tcp {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t", num(ratio(r, r.MPIUs, r.MPIMBps), "%.2f"),
				num(r.GoUs, "%.3f"), num(r.GoMBps, "%.1f"), num(ratio(r, r.GoUs, r.GoMBps), "%.2f"))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	note := "CM-5: CMAM on 33 MHz SPARC nodes (Liu & Culler; Luna Table 4). LogP rows: o from one-to-two (send) and two-to-one (receive), L = (round trip − 2 o_send − 2 o_recv)/2, g = ring − o_recv. docs/datanet.md explains each row."
	if tcp {
		note += " --tcp: MPI is Open MPI over TCP (--mca btl tcp,self --mca osc ^sm,ucx), Go TCP a plain net.Conn pair on loopback (median of 3 rounds); ÷MPI and ÷Go are ours over theirs: the time where a row has µs only (at most 1 is as fast), the bandwidth where it has MB/s (at least 1 is as fast)."
	}
	_, err := fmt.Fprintln(e.Stdout, note)
	return err
}

// ratio is a row's figure over a baseline's: bandwidths where both have
// one, else times (0: no figure to compare).
func ratio(r databench.Row, us, mbps float64) float64 {
	switch {
	case mbps > 0 && r.MeasuredMBps > 0:
		return r.MeasuredMBps / mbps
	case us > 0 && r.MeasuredUs > 0 && mbps == 0:
		return r.MeasuredUs / us
	}
	return 0
}
