package benchcmd

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// runBenchJSON runs papersctl bench with a short time cap and parses --json.
func runBenchJSON(t *testing.T, args ...string) map[string]benchResult {
	t.Helper()
	args = append([]string{"bench", "--json", "--max-time", "20ms"}, args...)
	out, errOut, st := runCLI(args...)
	if st != 0 {
		t.Fatalf("%v: status %d: %s", args, st, errOut)
	}
	var rs []benchResult
	if err := json.Unmarshal([]byte(out), &rs); err != nil {
		t.Fatalf("--json output does not parse: %v\n%s", err, out)
	}
	m := map[string]benchResult{}
	for _, r := range rs {
		if r.MeasuredNs <= 0 || r.Reps < 1 {
			t.Errorf("%s: no measurement (%+v)", r.Op, r)
		}
		m[r.Op] = r
	}
	return m
}

func near(got, want, rel float64) bool { return math.Abs(got-want) <= rel*want }

// TestBenchReproducesSeedTable checks the predictions, with the seed's
// 1.26 µs port operation, against the seed's table (docs/protocol.md, "The
// seed's measurements").
func TestBenchReproducesSeedTable(t *testing.T) {
	for _, n := range []string{"4", "8"} {
		pes := float64(n[0] - '0')
		m := runBenchJSON(t, "--pes", n, "--ops", "barrier,any,all,or4,vote,broadcast-byte,permutation-u64")
		for _, c := range []struct {
			op   string
			us   float64 // seed latency, µs
			kBps float64 // seed bandwidth, kB/s per PE
		}{
			{"barrier", 2.5, 0},
			{"any", 6.3, 0},
			{"all", 6.3, 0},
			{"or4", 6.3, 0},
			{"vote", 6.3 * math.Ceil(pes/4), 0},
			{"broadcast-byte", 0, 78},
			{"permutation-u64", 0, 78 / pes},
		} {
			r, ok := m[c.op]
			if !ok {
				t.Fatalf("%s PEs: no result for %s", n, c.op)
			}
			if r.PEs != int(pes) {
				t.Errorf("%s: pes = %d, want %s", c.op, r.PEs, n)
			}
			if c.us > 0 && !near(r.PredictedUs, c.us, 0.02) {
				t.Errorf("%s PEs %s: predicted %.2f µs, seed %.1f µs", n, c.op, r.PredictedUs, c.us)
			}
			if c.kBps > 0 && !near(r.PredictedKBps, c.kBps, 0.03) {
				t.Errorf("%s PEs %s: predicted %.1f kB/s, seed %.1f kB/s", n, c.op, r.PredictedKBps, c.kBps)
			}
		}
	}
}

func TestBenchTable(t *testing.T) {
	out, errOut, st := runCLI("bench", "--pes", "2", "--max-time", "10ms", "--ops", "barrier", "--port-op-us", "1")
	if st != 0 {
		t.Fatalf("status %d: %s", st, errOut)
	}
	if !strings.Contains(out, "barrier") || !strings.Contains(out, "2.0") {
		t.Errorf("table lacks the barrier row predicted at 2 µs:\n%s", out)
	}
}
