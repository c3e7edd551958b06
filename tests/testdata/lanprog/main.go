// Command lanprog keeps the data network busy for the LAN fault trials
// (tests' TestLANFaultTrials): in each round every PE stores a value
// tagged with the round into its slot on every other PE (Split-C stores)
// and waits for all of them (AllStoreSync), then checks each slot it
// holds. It prints "ready" before the first round and goes on for at
// least -rounds rounds and then until the file -stop exists (the PEs
// agree on the round by a vote). At the end it prints the sum of every
// PE's id+1 as its slots hold them ("sum=N"). A round that fails prints
// how long it took by the PE's own clock ("failed after D"), which bounds
// the time from a fault to the error (faulttrial.Tally reads it).
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/ttlpapers/ttlpapers/internal/faulttrial"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/splitc"
	"github.com/ttlpapers/ttlpapers/spmd"
)

var (
	rounds = flag.Int("rounds", 20, "rounds before the PEs look for the -stop file")
	stop   = flag.String("stop", "", "the file whose existence ends the run (none: after -rounds)")
)

// tag spaces a round's values apart: slot j holds round*tag + j+1.
const tag = 1000

func main() {
	spmd.Main(run)
}

func run(p *papers.PE) error {
	m, err := splitc.Attach(p)
	if err != nil {
		return err
	}
	n, self := p.PEs(), p.Self()
	// PE k's part holds two rows of slots, one per PE, used in turn: a
	// round's stores go to the row the round before did not use, which no
	// PE still reads, since every PE has checked it before it enters this
	// round's AllStoreSync.
	s, err := splitc.AllSpreadMalloc[int64](m, 2*n*n)
	if err != nil {
		return err
	}
	fmt.Println("ready")
	for r := 0; ; r++ {
		start := time.Now()
		if err := round(m, s, r); err != nil {
			fmt.Printf("%s%v\n", faulttrial.FailedAfter, time.Since(start))
			return err
		}
		row := r % 2 * n
		slots := splitc.Local(m, s)[row : row+n]
		sum := int64(0)
		for j, v := range slots {
			if v != int64(r*tag+j+1) {
				fmt.Printf("sum=%d\n", v) // a wrong answer, for the tally to count
				return fmt.Errorf("round %d: PE %d's slot holds %d, want %d", r, j, v, r*tag+j+1)
			}
			sum += v - int64(r*tag)
		}
		if r+1 < *rounds {
			continue
		}
		_, missing := os.Stat(*stop)
		done, err := p.Any(*stop == "" || missing == nil)
		if err != nil {
			return err
		}
		if done {
			fmt.Printf("PE %d: %d rounds\nsum=%d\n", self, r+1, sum)
			return nil
		}
	}
}

// round stores this PE's value for round r into its slot on every PE and
// waits until every PE's stores have arrived.
func round(m *splitc.Memory, s splitc.Spread[int64], r int) error {
	p := m.PE()
	n, self := p.PEs(), p.Self()
	for k := range n {
		// PE k's part holds elements k, k+n, …: its i-th is element
		// k + i*n, and this PE's slot of the round's row is its
		// (r%2*n + self)-th.
		if err := splitc.Store(m, s.At(k+(r%2*n+self)*n), int64(r*tag+self+1)); err != nil {
			return err
		}
	}
	return splitc.AllStoreSync(m)
}
