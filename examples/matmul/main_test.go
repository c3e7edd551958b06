package main

import (
	"os"
	"strings"
	"testing"

	"github.com/ttlpapers/ttlpapers/internal/leakcheck"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }

// TestMatmul multiplies on 1, 4 and 9 PEs (the result is checked inside,
// against the entries' formulas) and prints MFLOPS beside the seed's.
func TestMatmul(t *testing.T) {
	for _, c := range []struct{ pes, block int }{{1, 8}, {4, 16}, {9, 8}, {4, 64}} {
		var out strings.Builder
		if err := run(&out, c.pes, c.block); err != nil {
			t.Fatalf("%d PEs, block %d: %v", c.pes, c.block, err)
		}
		if !strings.Contains(out.String(), "result checked") || !strings.Contains(out.String(), "MFLOPS") {
			t.Errorf("output: %s", out.String())
		}
		if c.pes == 4 && c.block == 64 && !strings.Contains(out.String(), "CM-5 with CMAM, 4 PEs, 64×64: 19 MFLOPS") {
			t.Errorf("no seed figure beside ours: %s", out.String())
		}
	}
}

func TestMatmulBadInput(t *testing.T) {
	for _, c := range []struct{ pes, block int }{{3, 8}, {4, 0}} {
		if err := run(new(strings.Builder), c.pes, c.block); err == nil {
			t.Errorf("%d PEs, block %d: accepted", c.pes, c.block)
		}
	}
}
