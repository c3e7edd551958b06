package databench

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/internal/leakcheck"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }

// TestRun runs every benchmark of the seeds once, briefly, and checks that
// each row is there with our figure and the seed's.
func TestRun(t *testing.T) {
	rows, err := Run(context.Background(), Options{RingPEs: 3, MaxTime: 30 * time.Millisecond, Tolerance: 1, Sizes: []int{64, 4096}})
	if err != nil {
		t.Fatal(err)
	}
	AddMPI(rows, map[string]float64{"round_trip_us": 0.9, "get_us": 0.1, "put_bw_MBps size=4096": 900, "send_us": 0.2})
	var ops []string
	for _, r := range rows {
		ops = append(ops, r.Op)
		if r.Op != "logp-g" && r.Op != "logp-L" && r.MeasuredUs <= 0 {
			t.Errorf("%s %d B: measured %v µs", r.Op, r.Bytes, r.MeasuredUs)
		}
		if r.Seed == "" {
			t.Errorf("%s: no seed source", r.Op)
		}
		mpi := map[string]float64{"am-round-trip 8": 0.9, "splitc-read 8": 0.1, "am-one-to-one 8": 0.2}[fmt.Sprint(r.Op, " ", r.Bytes)]
		mbps := map[string]float64{"bulk-put 4096": 900, "strata-block-xfer 4096": 900}[fmt.Sprint(r.Op, " ", r.Bytes)]
		if r.MPIUs != mpi || r.MPIMBps != mbps || (mpi != 0 || mbps != 0) != (r.MPIOp != "") {
			t.Errorf("%s %d B: MPI %v µs %v MB/s (%q), want %v µs %v MB/s", r.Op, r.Bytes, r.MPIUs, r.MPIMBps, r.MPIOp, mpi, mbps)
		}
	}
	for _, want := range []string{"am-one-to-one", "am-one-to-two", "am-two-to-one", "am-round-trip", "am-ring",
		"logp-o-send", "logp-o-recv", "logp-L", "logp-g", "splitc-read", "splitc-write", "splitc-get", "splitc-put",
		"splitc-store", "bulk-read", "bulk-write", "bulk-get", "bulk-put", "bulk-store", "strata-block-xfer", "strata-block-xfer-fit"} {
		if !slices.Contains(ops, want) {
			t.Errorf("no %s row", want)
		}
	}
}

// TestLogPSeed: the seed's LogP rows are the AM paper's arithmetic on its
// CMAM figures: L = (11.40 - 2·1.49 - 2·1.60)/2 = 2.61, g = 3.18 - 1.60.
func TestLogPSeed(t *testing.T) {
	want := map[string]float64{"logp-o-send": 1.49, "logp-o-recv": 1.60, "logp-L": 2.61, "logp-g": 1.58}
	for _, r := range logP(1, 2, 20, 5) {
		if math.Abs(r.SeedUs-want[r.Op]) > 1e-9 {
			t.Errorf("%s: seed %v, want %v", r.Op, r.SeedUs, want[r.Op])
		}
	}
	if r := logP(1, 2, 20, 5); r[2].MeasuredUs != 7 || r[3].MeasuredUs != 3 {
		t.Errorf("ours: L %v (want (20-2-4)/2 = 7), g %v (want 5-2 = 3)", r[2].MeasuredUs, r[3].MeasuredUs)
	}
}

func TestFit(t *testing.T) {
	xs := []float64{64, 1024, 65536}
	var ts []float64
	for _, x := range xs {
		ts = append(ts, 21.1+x/10.11)
	}
	if c, b := fit(xs, ts); math.Abs(c-21.1) > 1e-6 || math.Abs(b-10.11) > 1e-6 {
		t.Errorf("fit: c %v b %v, want 21.1 and 10.11", c, b)
	}
}
