package benchcmd

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestBenchData runs papersctl bench --data --json briefly: a list of rows
// with op, pes, bytes, a measured figure and the seed's beside it.
func TestBenchData(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every data-network benchmark (seconds)")
	}
	rows := benchDataRows(t, "--pes", "3")
	seen := map[string]bool{}
	for _, r := range rows {
		op, _ := r["op"].(string)
		seen[op] = true
		for _, f := range []string{"op", "pes", "bytes", "seed"} {
			if _, ok := r[f]; !ok {
				t.Errorf("%s: no %q field", op, f)
			}
		}
		if r["measured_us"] == nil && r["measured_MBps"] == nil {
			t.Errorf("%s: no measured_ figure", op)
		}
		if r["seed_us"] == nil && r["seed_MBps"] == nil && !strings.HasPrefix(op, "bulk-") {
			t.Errorf("%s: no seed_ figure", op)
		}
	}
	for _, op := range []string{"am-round-trip", "am-ring", "logp-L", "splitc-read", "bulk-store", "strata-block-xfer"} {
		if !seen[op] {
			t.Errorf("no %s row", op)
		}
	}
}

// benchDataRows runs bench --data --json briefly with args and returns
// its rows.
func benchDataRows(t *testing.T, args ...string) []map[string]any {
	t.Helper()
	out, errOut, st := runCLI(append([]string{"bench", "--data", "--json", "--max-time", "10ms"}, args...)...)
	if st != 0 {
		t.Fatalf("status %d: %s", st, errOut)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("--json output does not parse: %v\n%s", err, out)
	}
	return rows
}

func TestBenchDataFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--data", "--procs", "2,4"}, "one process count"},
		{[]string{"--data", "--procs", "2", "--mpi", "2"}, "drop one"},
		{[]string{"--data", "--procs", "2", "--pes", "3"}, "drop --pes"},
		{[]string{"--mpi", "2"}, "only with --data"},
	} {
		_, errOut, st := runCLI(append([]string{"bench"}, tc.args...)...)
		if st == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: status %d, %s; want an error saying %q", tc.args, st, errOut, tc.want)
		}
	}
}
