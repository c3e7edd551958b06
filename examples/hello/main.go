// Command hello is the README's program: every PE meets the others at a
// barrier, votes, and adds up the PE ids. Run by itself it runs its PEs
// in-process on an emulated board; started by papersctl run, by mpirun or
// with a port, this process is one PE.
package main

import (
	"flag"
	"fmt"
	"log"

	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/spmd"
)

// hello runs on every PE.
func hello(p *papers.PE) error {
	if err := p.Barrier(); err != nil { // every PE has arrived
		return err
	}
	even, err := p.Vote(p.Self()%2 == 0) // bit k: PE k voted yes
	if err != nil {
		return err
	}
	sum, err := papers.Reduce(p, papers.Sum, uint16(p.Self()))
	if err != nil {
		return err
	}
	fmt.Printf("PE %d of %d: even PEs %04b, sum of the ids %d\n", p.Self(), p.PEs(), even, sum)
	return nil
}

func main() {
	spmd.RegisterFlags(flag.CommandLine) // the -papers.* flags, which -h lists
	if spmd.Launched() {
		spmd.Main(hello) // reads -papers.* flags and PAPERS_* variables; does not return
	}
	// No launcher, no -papers.* flag: 4 PEs in this process, one
	// goroutine each.
	flag.Parse()
	if err := emulate.Run(4, papers.Config{}, hello); err != nil {
		log.Fatal(err)
	}
}
