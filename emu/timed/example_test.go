package timed_test

import (
	"fmt"
	"sync"

	"github.com/ttlpapers/ttlpapers/emu/timed"
	"github.com/ttlpapers/ttlpapers/papers"
)

// ExampleNew runs the real driver on a timed board: two PEs on the
// seed's ISA ports with 10-foot cables, a check-in (with its agreement on
// the program and its test of the data lines) and one NAND, in simulated
// time. The same seeds give the same run on any machine.
func ExampleNew() {
	b, err := timed.New(timed.Config{PEs: 2, Cable: timed.Cable{Metres: []float64{timed.TenFeet}}, PowerUp: []bool{false, false}})
	if err != nil {
		panic(err)
	}
	ports, err := b.Ports(timed.RunConfig{Timing: timed.ISA})
	if err != nil {
		panic(err)
	}
	results := make([]uint8, len(ports))
	var wg sync.WaitGroup
	for k, port := range ports {
		wg.Go(func() {
			defer port.Close()
			p, err := papers.Open(port, papers.Config{PE: k, PEs: len(ports), FreshBoard: true})
			if err != nil {
				panic(err)
			}
			defer p.Close()
			if results[k], err = p.NAND([]uint8{0b0011, 0b0110}[k]); err != nil {
				panic(err)
			}
		})
	}
	wg.Wait()
	fmt.Printf("NAND %04b and %04b, %d port operations on PE 0, done after %.1f µs\n", results[0], results[1], ports[0].Ops(), b.Now().Seconds()*1e6)
	// Output: NAND 1101 and 1101, 183 port operations on PE 0, done after 236.0 µs
}
