// Command radixsort is the radix sort of the Strata and Libsplit-C papers
// on an emulated TTL_PAPERS board: every PE holds the same number of
// random keys; each pass histograms one digit locally (fill), scans the
// histograms across the PEs with Strata's CombineVector(ScanAdd) (scan),
// and streams every key to its destination PE over the board's NAND lines
// (coalesce). It verifies the result (globally sorted, a permutation of the
// input), prints the time and NAND count of each phase, and can write the
// Strata state graph as SVG.
//
//	go run ./examples/radixsort -pes 4 -svg radix.svg
//
// With -memory the coalesce goes through Split-C's global memory instead,
// as the Libsplit-C report's radix sort does (§6.2): a store per key into a
// spread array, then all_store_sync (package splitc, on the data network).
//
// Every key crosses the board once per pass, 4 bits per NAND, so the
// coalesce phase dominates: 2000 16-bit keys per PE take about 0.6 s on 4
// emulated PEs and 3 s on 8 (2 vCPUs); the NAND counts are what a real
// board would do. The summary gives the time per NAND beside the 1995
// board's 6.3 µs.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/ttlpapers/ttlpapers/baseline"
	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/spmd"
	"github.com/ttlpapers/ttlpapers/strata"
)

func main() {
	pes := flag.Int("pes", 4, fmt.Sprintf("number of PEs (1 to %d)", lpt.MaxPEs))
	keys := flag.Int("keys", 2000, "keys per PE")
	keyBits := flag.Int("keybits", 16, "bits per key: 8, 16, 24 or 32")
	digitBits := flag.Int("digit", 4, "bits sorted per pass")
	svg := flag.String("svg", "", "write the Strata state graph to this SVG file")
	memory := flag.Bool("memory", false, "coalesce through Split-C global memory (a store per key, then all_store_sync: Libsplit-C §6.2) instead of the board's NAND lines")
	anchor := flag.Bool("anchor", true, "also time the native Go barriers (package baseline) with as many goroutines")
	launched := spmd.Launched()
	if launched {
		spmd.RegisterFlags(flag.CommandLine) // spmd.Main's -papers.* flags, before the parse
	}
	flag.Parse()
	if launched {
		cfg := Config{KeyBits: *keyBits, DigitBits: *digitBits, Memory: *memory}
		if err := cfg.check(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		spmd.Main(strata.Program(func(s *strata.S) error {
			res, _, _, err := sortPE(s, *keys, cfg, *svg)
			if err == nil && s.Self() == 0 {
				report(os.Stdout, s.PartitionSize(), *keys, cfg, *svg, res)
			}
			return err
		}))
	}
	// Progress on stderr, a line per pass: a sort takes seconds.
	start := time.Now()
	show := func(pass, passes int) {
		fmt.Fprintf(os.Stderr, "radixsort: pass %d of %d, %v\n", pass, passes, time.Since(start).Round(time.Second))
	}
	res, err := run(os.Stdout, *pes, *keys, Config{KeyBits: *keyBits, DigitBits: *digitBits, Progress: show, Memory: *memory}, *svg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if *anchor && res.NANDs > 0 {
		anchorLine(os.Stdout, *pes, res.perNAND())
	}
}

// anchorLine prints the native Go barriers of package baseline with as
// many goroutines as PEs, timed now, on this machine, and how a NAND of
// perNAND µs compares with the best of them: a NAND synchronises every PE
// twice (the result, then the trailing barrier), so even a NAND built of
// two such barriers, with no board to emulate, costs twice the best.
func anchorLine(w io.Writer, pes int, perNAND float64) {
	g := baseline.Go(pes)
	fmt.Fprintf(w, "native Go barriers, %d goroutines, timed now: spin %.2f µs, yield %.2f µs, cond %.2f µs; a NAND is %.1f× the best (%.2f µs)\n",
		pes, g.Spin, g.Yield, g.Cond, perNAND/g.Best(), g.Best())
}

// Result is what PE 0 reports of a run.
type Result struct {
	Phases []Phase
	Time   time.Duration
	NANDs  uint64
}

// perNAND is the time per NAND in µs.
func (r Result) perNAND() float64 { return float64(r.Time.Nanoseconds()) / 1e3 / float64(r.NANDs) }

func run(w io.Writer, pes, keys int, cfg Config, svg string) (Result, error) {
	res, err := sortRun(pes, keys, cfg, svg, nil)
	if err != nil {
		return res, err
	}
	report(w, pes, keys, cfg, svg, res)
	return res, nil
}

// report prints PE 0's result: the phases, and the time per NAND (on MPI,
// per collective operation).
func report(w io.Writer, pes, keys int, cfg Config, svg string, res Result) {
	how := "the board's NAND lines"
	if cfg.Memory {
		how = "global memory (splitc stores)"
	}
	fmt.Fprintf(w, "radix sort: %d PEs x %d keys of %d bits, %d-bit digits (%d passes), coalesced through %s: sorted and verified\n",
		pes, keys, cfg.KeyBits, cfg.DigitBits, cfg.KeyBits/cfg.DigitBits, how)
	fmt.Fprintf(w, "%-10s %12s %8s\n", "phase", "time", "NANDs")
	for _, p := range res.Phases {
		fmt.Fprintf(w, "%-10s %12v %8d\n", p.Name, p.Time.Round(time.Microsecond), p.NANDs)
	}
	fmt.Fprintf(w, "%-10s %12v %8d\n", "total", res.Time.Round(time.Microsecond), res.NANDs)
	if res.NANDs > 0 {
		fmt.Fprintf(w, "%d NANDs, %.2f µs per NAND (the 1995 board: 6.3 µs)\n", res.NANDs, res.perNAND())
	}
	for _, p := range res.Phases {
		if stores := keys * cfg.KeyBits / cfg.DigitBits; cfg.Memory && p.Name == "coalesce" && stores > 0 {
			fmt.Fprintf(w, "%d stores per PE, %.2f µs per store (with all_store_sync)\n", stores, float64(p.Time.Nanoseconds())/1e3/float64(stores))
		}
	}
	if svg != "" {
		fmt.Fprintf(w, "state graph: %s\n", svg)
	}
}

// sortRun sorts pes*keys random keys on an emulated board and verifies the
// result; when outputs is not nil it also receives each PE's input and
// output, for tests to check directly.
func sortRun(pes, keys int, cfg Config, svg string, outputs *[2][][]uint32) (Result, error) {
	if err := cfg.check(); err != nil {
		return Result{}, err
	}
	if keys < 1 {
		return Result{}, fmt.Errorf("radixsort: %d keys per PE: need at least 1", keys)
	}
	var res Result
	var mu sync.Mutex
	if outputs != nil {
		outputs[0] = make([][]uint32, pes)
		outputs[1] = make([][]uint32, pes)
	}
	err := emulate.Run(pes, papers.Config{}, strata.Program(func(s *strata.S) error {
		r, in, out, err := sortPE(s, keys, cfg, svg)
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		if outputs != nil {
			outputs[0][s.Self()], outputs[1][s.Self()] = in, out
		}
		if s.Self() == 0 {
			res = r
		}
		return nil
	}))
	return res, err
}

// sortPE is one PE's part: it sorts keys random keys with the others,
// verifies the result and returns the timing, its input and its output.
func sortPE(s *strata.S, keys int, cfg Config, svg string) (Result, []uint32, []uint32, error) {
	in := make([]uint32, keys)
	for i := range in {
		in[i] = s.Random() & uint32(uint64(1)<<cfg.KeyBits-1)
	}
	if svg != "" {
		if err := s.InitTrace(svg, fmt.Sprintf("radix sort: %d PEs x %d keys", s.PartitionSize(), keys)); err != nil {
			return Result{}, nil, nil, err
		}
	}
	if err := s.Barrier(); err != nil {
		return Result{}, nil, nil, err
	}
	start, nands := time.Now(), s.NANDs()
	out, phases, err := Sort(s, in, cfg)
	if err != nil {
		return Result{}, nil, nil, err
	}
	elapsed, used := time.Since(start), s.NANDs()-nands
	if err := Verify(s, in, out); err != nil {
		return Result{}, nil, nil, err
	}
	if svg != "" {
		if err := s.OutputStateLog(); err != nil {
			return Result{}, nil, nil, err
		}
	}
	return Result{Phases: phases, Time: elapsed, NANDs: used}, in, out, nil
}
