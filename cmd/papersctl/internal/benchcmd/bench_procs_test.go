//go:build linux

package benchcmd

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/ttlpapers/ttlpapers/baseline"
)

// TestBenchProcs: bench --procs runs the barrier and the NAND between live
// processes (this test binary, as papersctl) and reports both; the anchors
// are optional (skipped with a note when absent).
func TestBenchProcs(t *testing.T) {
	noMPIBaseline(t) // this test checks the board's side
	out, errOut, st := runCLI("bench", "--procs", "2,3", "--json", "--max-time", "50ms")
	if st != 0 {
		t.Fatalf("status %d: %s", st, errOut)
	}
	var rows []procsResult
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("--json output does not parse: %v\n%s", err, out)
	}
	want := []string{"2 barrier", "2 nand4", "3 barrier", "3 nand4"}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(rows), len(want), rows)
	}
	for i, r := range rows {
		if got := strconv.Itoa(r.Procs) + " " + r.Op; got != want[i] || r.MeasuredNs <= 0 || r.Reps < 1 {
			t.Errorf("row %d: %+v, want %s measured", i, r, want[i])
		}
	}
	if !strings.Contains(errOut, "anchor skipped") {
		t.Errorf("no note that the anchors were skipped: %q", errOut)
	}
}

// noMPIBaseline leaves MPI's figures out of t's benchmarks, as when MPI
// is not installed.
func noMPIBaseline(t *testing.T) {
	mpi, data := mpiBaseline, mpiDataBaseline
	t.Cleanup(func() { mpiBaseline, mpiDataBaseline = mpi, data })
	mpiBaseline = func(int, bool) (baseline.Collectives, error) { return baseline.Collectives{}, baseline.ErrAbsent }
	mpiDataBaseline = func(bool) (map[string]float64, error) { return nil, baseline.ErrAbsent }
}

// TestBenchDataProcs: bench --data --procs 2 runs the data network's
// benchmarks between 2 processes (this test binary, as papersctl) over the
// shared-memory transport; those needing 3 PEs are left out.
func TestBenchDataProcs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every data-network benchmark between processes (seconds)")
	}
	noMPIBaseline(t) // this test checks our side
	seen := map[string]bool{}
	for _, r := range benchDataRows(t, "--procs", "2") {
		seen[r["op"].(string)] = true
		if r["measured_us"] == nil && r["measured_MBps"] == nil {
			t.Errorf("%v: no measured figure", r["op"])
		}
	}
	for op, want := range map[string]bool{"am-round-trip": true, "am-ring": true, "splitc-read": true, "bulk-put": true, "strata-block-xfer": true, "am-one-to-two": false} {
		if seen[op] != want {
			t.Errorf("row %s present: %v, want %v", op, seen[op], want)
		}
	}
}

// TestRunPEsFailure: when the PE processes fail before PE 0 reports, the
// parent says so rather than waiting on the pipe.
func TestRunPEsFailure(t *testing.T) {
	var stderr strings.Builder
	var rows []procsResult
	err := runPEs(2, false, []string{"--tolerance", "2"}, &stderr, &rows)
	if err == nil || !strings.Contains(stderr.String(), "--tolerance 2") {
		t.Errorf("error %v, stderr %q: want the run's failure and the PEs' usage error", err, stderr.String())
	}
}
