package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ttlpapers/ttlpapers/internal/leakcheck"
)

// TestMain fails the tests when they leave goroutines running.
func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }

// Sort on 4 and 8 PEs, checked directly against slices.Sort of every
// input key (Verify's collective check runs inside sortRun as well).
func TestRadixSort(t *testing.T) {
	for _, c := range []struct {
		pes, keys int
		cfg       Config
	}{
		{4, 48, Config{KeyBits: 16, DigitBits: 4}},
		{8, 16, Config{KeyBits: 8, DigitBits: 4}},
		{4, 2000, Config{KeyBits: 16, DigitBits: 8}}, // a few thousand keys per PE
	} {
		var io [2][][]uint32
		svg := filepath.Join(t.TempDir(), "radix.svg")
		res, err := sortRun(c.pes, c.keys, c.cfg, svg, &io)
		if err != nil {
			t.Fatalf("%d PEs: %v", c.pes, err)
		}
		want := slices.Concat(io[0]...)
		slices.Sort(want)
		got := slices.Concat(io[1]...)
		if !slices.Equal(got, want) {
			t.Errorf("%d PEs: sorted %v, want %v", c.pes, got, want)
		}
		if len(slices.Compact(slices.Clone(want))) < len(want)/2 {
			t.Errorf("%d PEs: inputs barely differ: %v", c.pes, want)
		}
		// every key crosses the board once per pass: keybits/4 NANDs each
		passes := c.cfg.KeyBits / c.cfg.DigitBits
		perWord := 64 / c.cfg.KeyBits
		wantMove := uint64(passes * ((c.pes*c.keys + perWord - 1) / perWord) * 16)
		if res.Phases[2].NANDs != wantMove {
			t.Errorf("%d PEs: coalesce took %d NANDs, want %d", c.pes, res.Phases[2].NANDs, wantMove)
		}
		b, err := os.ReadFile(svg)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"<svg", "PE 0", "PE " + string(rune('0'+c.pes-1)), "coalesce", "combine", "time ("} {
			if !strings.Contains(string(b), s) {
				t.Errorf("%d PEs: state graph lacks %q", c.pes, s)
			}
		}
	}
}

// The comparison line: the native Go barriers of package baseline with as
// many goroutines as PEs, timed in the same run, and a NAND's ratio to the
// best of them.
func TestAnchorLine(t *testing.T) {
	var out strings.Builder
	const perNAND = 3.0
	anchorLine(&out, 2, perNAND)
	var spin, yield, cond, ratio, best float64
	_, err := fmt.Sscanf(out.String(), "native Go barriers, 2 goroutines, timed now: spin %f µs, yield %f µs, cond %f µs; a NAND is %f× the best (%f µs)", &spin, &yield, &cond, &ratio, &best)
	// The figures are printed rounded: best to 0.005 µs, the ratio to 0.05.
	if err != nil || spin <= 0 || yield <= 0 || cond <= 0 || math.Abs(best-min(spin, yield, cond)) > 0.006 ||
		ratio < perNAND/(best+0.006)-0.06 || best > 0.006 && ratio > perNAND/(best-0.006)+0.06 {
		t.Errorf("anchor line %q: spin %v, yield %v, cond %v, best %v, ratio %v, %v", out.String(), spin, yield, cond, best, ratio, err)
	}
}

// TestRadixSortMemory sorts with Libsplit-C's coalesce (§6.2): a store per
// key into global memory, then all_store_sync — no NANDs in the coalesce
// phase but all_store_sync's reductions.
func TestRadixSortMemory(t *testing.T) {
	var io [2][][]uint32
	res, err := sortRun(3, 500, Config{KeyBits: 16, DigitBits: 8, Memory: true}, "", &io)
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Concat(io[0]...)
	slices.Sort(want)
	if got := slices.Concat(io[1]...); !slices.Equal(got, want) {
		t.Errorf("sorted %v, want %v", got, want)
	}
	if board := uint64(2 * ((3*500 + 3) / 4) * 16); res.Phases[2].NANDs >= board/10 {
		t.Errorf("coalesce through memory took %d NANDs; through the board it takes %d", res.Phases[2].NANDs, board)
	}
}
