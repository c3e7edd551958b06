// Command spmd is the smallest SPMD PAPERS program: every PE computes the
// sum of all PE ids with aggregate operations and prints "PE i/n sum=S".
//
// The same binary runs on the board, with its PE, PE count and port from
// PAPERS_PE, PAPERS_PES and PAPERS_PORT (or -papers.* flags), as N
// processes on one machine under papersctl run, or on a cluster under
// mpirun:
//
//	go build -o spmd ./examples/spmd
//	papersctl run -n 4 -- ./spmd -papers.timeout 5s
//	go build -tags mpi -o spmd ./examples/spmd
//	mpirun -np 4 ./spmd
//
// Started by none of them, it runs its PEs in-process, one goroutine each
// on an emulated board (package emulate):
//
//	go run ./examples/spmd -pes 4
//
// -rounds R repeats the sum R times (a collective-heavy load for tests),
// and PE 0 then prints the time per NAND (under mpirun, per MPI collective).
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/spmd"
)

var (
	rounds = flag.Int("rounds", 1, "how many times to compute the sum (a load for failure tests)")
	pes    = flag.Int("pes", 4, fmt.Sprintf("number of PEs when run in-process (1 to %d)", lpt.MaxPEs))
)

func main() {
	program := func(p *papers.PE) error { return run(p, *rounds) }
	if spmd.Launched() {
		spmd.Main(program) // parses the command line, adding its -papers.* flags
	}
	flag.Parse()
	if *pes < 1 || *pes > lpt.MaxPEs {
		fmt.Fprintf(os.Stderr, "spmd: -pes %d: need 1 to %d\n", *pes, lpt.MaxPEs)
		os.Exit(2)
	}
	if err := emulate.Run(*pes, papers.Config{}, program); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(p *papers.PE, rounds int) error {
	start, before := time.Now(), p.Stats().NANDs
	var sum int
	for r := 0; r < rounds; r++ {
		s, err := Sum(p, p.Self())
		if err != nil {
			return err
		}
		if r > 0 && s != sum {
			return fmt.Errorf("round %d: sum %d, earlier %d", r, s, sum)
		}
		sum = s
	}
	elapsed, nands := time.Since(start), p.Stats().NANDs-before
	fmt.Printf("PE %d/%d sum=%d\n", p.Self(), p.PEs(), sum)
	if p.Self() == 0 && rounds > 1 { // a load run: its speed
		fmt.Printf("PE 0: %d NANDs in %d rounds, %.2f µs per NAND\n", nands, rounds, float64(elapsed.Nanoseconds())/1e3/float64(nands))
	}
	return nil
}

// Sum returns the sum over all PEs of their non-negative x (below 2^16): one
// vote per bit, each vote telling every PE which PEs have that bit set.
func Sum(p *papers.PE, x int) (int, error) {
	if x < 0 || x >= 1<<16 {
		return 0, fmt.Errorf("Sum: %d is out of range 0 to 65535", x)
	}
	var sum int
	for b := 0; b < 16; b++ {
		any, err := p.Any(x>>b != 0)
		if err != nil {
			return 0, err
		}
		if !any {
			break // no PE has bits at b or above
		}
		mask, err := p.Vote(x>>b&1 == 1)
		if err != nil {
			return 0, err
		}
		sum += mask.Len() << b
	}
	return sum, nil
}
