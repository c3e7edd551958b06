package main

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
	out, errOut, st := runCLI("bench", "--data", "--json", "--max-time", "10ms", "--pes", "3")
	if st != 0 {
		t.Fatalf("status %d: %s", st, errOut)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("--json output does not parse: %v\n%s", err, out)
	}
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

func TestBenchDataFlags(t *testing.T) {
	_, errOut, st := runCLI("bench", "--data", "--procs", "2")
	if st == 0 || !strings.Contains(errOut, "--data") {
		t.Errorf("--data with --procs: status %d, %s", st, errOut)
	}
}
