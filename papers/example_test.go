package papers_test

import (
	"fmt"

	"github.com/ttlpapers/ttlpapers/papers"
)

// Four PEs on the emulated board: a barrier, then a vote in which the even
// PEs say yes. Every PE gets the same mask.
func ExampleEmulate() {
	err := papers.Emulate(4, papers.Config{}, func(p *papers.PE) error {
		if err := p.Barrier(); err != nil {
			return err
		}
		mask, err := p.Vote(p.Self()%2 == 0)
		if err != nil {
			return err
		}
		if p.Self() == 0 {
			fmt.Printf("votes: %04b\n", mask)
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output: votes: 0101
}

// NAND is the board's one data primitive: every PE contributes 4 bits and
// every PE reads the NAND of all contributions.
func ExamplePE_NAND() {
	papers.Emulate(2, papers.Config{}, func(p *papers.PE) error {
		x := []uint8{0b1100, 0b1010}[p.Self()]
		r, err := p.NAND(x)
		if p.Self() == 0 && err == nil {
			fmt.Printf("NAND(1100, 1010) = %04b\n", r)
		}
		return err
	})
	// Output: NAND(1100, 1010) = 0111
}
