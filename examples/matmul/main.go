// Command matmul is the Libsplit-C report's matrix multiply (Luna §6.1) on
// Split-C global memory over emulated PEs: the q·b × q·b matrices A, B and
// C are cut into b × b blocks on a q × q grid of PEs, each PE holding one
// block of each ("64x64 means that each processor contained a 64x64
// element square of each matrix"). PE (i, j) computes C(i,j) = Σ_k
// A(i,k) B(k,j), fetching the blocks it needs with split-phase bulk gets,
// the next pair on its way while it multiplies the current one. It checks
// its result and prints MFLOPS beside the CM-5's (Luna Table 1, CMAM).
//
//	go run ./examples/matmul -pes 4 -block 128
//
// Started by papersctl run or mpirun, each process is one PE (the PE count
// is theirs): the global memory is then the data network between
// processes, in shared memory or over MPI.
//
//	papersctl run -n 4 -- matmul -block 128
//	mpirun -np 4 matmul -block 128    (built with -tags mpi)
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/splitc"
	"github.com/ttlpapers/ttlpapers/spmd"
)

func main() {
	pes := flag.Int("pes", 4, "number of PEs: a square (1, 4, 9, 16, 25)")
	block := flag.Int("block", 64, "each PE's block of each matrix is block × block (the report ran 64 to 512)")
	if spmd.Launched() {
		// Main parses the command line, adding its -papers.* flags.
		spmd.Main(func(p *papers.PE) error {
			q, err := grid(p.PEs(), *block)
			if err != nil {
				return err
			}
			r, err := multiplyPE(p, q, *block)
			if err == nil && p.Self() == 0 {
				report(os.Stdout, p.PEs(), *block, r)
			}
			return err
		})
	}
	flag.Parse()
	if err := run(os.Stdout, *pes, *block); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// seedMFLOPS is Luna's Table 1, CMAM column: 4 PEs of the CM-5.
var seedMFLOPS = map[int]float64{64: 19, 128: 23, 256: 23, 512: 21}

func run(w io.Writer, pes, b int) error {
	r, err := multiply(pes, b)
	if err != nil {
		return err
	}
	report(w, pes, b, r)
	return nil
}

func report(w io.Writer, pes, b int, r result) {
	n := r.q * b
	fmt.Fprintf(w, "matrix multiply: %d×%d matrices, %d PEs, %d×%d blocks: result checked\n", n, n, pes, b, b)
	fmt.Fprintf(w, "%.3f s, %.1f MFLOPS", r.elapsed.Seconds(), r.mflops)
	if s, ok := seedMFLOPS[b]; ok && pes == 4 {
		fmt.Fprintf(w, " (the CM-5 with CMAM, 4 PEs, %d×%d: %.0f MFLOPS)", b, b, s)
	}
	fmt.Fprintln(w)
	// Each PE fetches q blocks of A and q of B, each while it multiplies
	// the pair before.
	gets := 2 * r.q
	fmt.Fprintf(w, "%d bulk gets of %d KiB per PE, %.1f µs per get with the multiply overlapped\n", gets, b*b*8/1024, float64(r.elapsed.Nanoseconds())/1e3/float64(gets))
}

type result struct {
	q       int
	elapsed time.Duration
	mflops  float64
}

// The matrices' entries are small integers, so every sum is exact.
func aAt(r, c int) float64 { return float64((7*r+3*c)%11) - 5 }
func bAt(r, c int) float64 { return float64((5*r+2*c)%13) - 6 }

// grid checks the PE count and block size and returns the grid's side.
func grid(pes, b int) (int, error) {
	q := int(math.Round(math.Sqrt(float64(pes))))
	if q*q != pes || pes < 1 {
		return 0, fmt.Errorf("matmul: %d PEs: the blocks form a square grid: use 1, 4, 9, 16 or 25 PEs", pes)
	}
	if b < 1 || b > 1024 {
		return 0, fmt.Errorf("matmul: block %d: use 1 to 1024", b)
	}
	return q, nil
}

// multiply runs the program on goroutine PEs and returns PE 0's timing.
func multiply(pes, b int) (result, error) {
	q, err := grid(pes, b)
	if err != nil {
		return result{}, err
	}
	var res result
	err = emulate.Run(pes, papers.Config{}, func(p *papers.PE) error {
		r, err := multiplyPE(p, q, b)
		if p.Self() == 0 {
			res = r // PE 0's timing, as the report's
		}
		return err
	})
	return res, err
}

// multiplyPE is one PE's part; PE 0 returns the timing.
func multiplyPE(p *papers.PE, q, b int) (result, error) {
	pes, me := p.PEs(), p.Self()
	m, err := splitc.Attach(p)
	if err != nil {
		return result{}, err
	}
	i, j := me/q, me%q
	// One spread array per matrix; PE k's part is its block, row-major.
	A, err := splitc.AllSpreadMalloc[float64](m, pes*b*b)
	if err != nil {
		return result{}, err
	}
	B, err := splitc.AllSpreadMalloc[float64](m, pes*b*b)
	if err != nil {
		return result{}, err
	}
	a, bb := splitc.Local(m, A), splitc.Local(m, B)
	for r := range b {
		for c := range b {
			a[r*b+c] = aAt(i*b+r, j*b+c)
			bb[r*b+c] = bAt(i*b+r, j*b+c)
		}
	}
	if err := splitc.Barrier(p); err != nil {
		return result{}, err
	}
	start := time.Now()
	c, err := multiplyBlock(m, A, B, i, j, q, b)
	if err != nil {
		return result{}, err
	}
	if err := splitc.Barrier(p); err != nil {
		return result{}, err
	}
	elapsed := time.Since(start)
	if err := check(c, i, j, q, b); err != nil {
		return result{}, fmt.Errorf("matmul: PE %d: %w", me, err)
	}
	n := float64(q * b)
	return result{q: q, elapsed: elapsed, mflops: 2 * n * n * n / elapsed.Seconds() / 1e6}, splitc.Barrier(p)
}

// multiplyBlock computes this PE's block of C: for each k it fetches
// A(i,k) and B(k,j) with bulk gets counted by the buffer's own counter,
// and starts fetching the next pair before multiplying this one.
func multiplyBlock(m *splitc.Memory, A, B splitc.Spread[float64], i, j, q, b int) ([]float64, error) {
	var bufA, bufB [2][]float64
	var ctr [2]splitc.Counter
	for x := range 2 {
		bufA[x], bufB[x] = make([]float64, b*b), make([]float64, b*b)
	}
	fetch := func(k, x int) error {
		// PE (i,k)'s part of A, PE (k,j)'s part of B: At(pe) is its first element.
		if err := splitc.BulkGetCtr(m, bufA[x], A.At(i*q+k), &ctr[x]); err != nil {
			return err
		}
		return splitc.BulkGetCtr(m, bufB[x], B.At(k*q+j), &ctr[x])
	}
	c := make([]float64, b*b)
	if err := fetch(0, 0); err != nil {
		return nil, err
	}
	for k := range q {
		x := k & 1
		if k+1 < q {
			if err := fetch(k+1, 1-x); err != nil {
				return nil, err
			}
		}
		if err := splitc.SyncCtr(m, &ctr[x]); err != nil {
			return nil, err
		}
		mulAdd(c, bufA[x], bufB[x], b)
	}
	return c, nil
}

// mulAdd adds a·bm to c (b × b, row-major), in the cache-friendly i-k-j
// order.
func mulAdd(c, a, bm []float64, b int) {
	for r := range b {
		cr := c[r*b : (r+1)*b]
		for k := range b {
			ark := a[r*b+k]
			br := bm[k*b : (k+1)*b]
			for col, v := range br {
				cr[col] += ark * v
			}
		}
	}
}

// check compares the block with C computed from the entries' formulas.
func check(c []float64, i, j, q, b int) error {
	n := q * b
	for r := range b {
		for col := range b {
			var want float64
			for k := range n {
				want += aAt(i*b+r, k) * bAt(k, j*b+col)
			}
			if got := c[r*b+col]; got != want {
				return fmt.Errorf("entry (%d, %d) of C is %v, want %v", i*b+r, j*b+col, got, want)
			}
		}
	}
	return nil
}
