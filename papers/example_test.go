package papers_test

import (
	"fmt"

	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/papers"
)

// NAND is the board's one data primitive: every PE contributes 4 bits and
// every PE reads the NAND of all contributions.
func ExamplePE_NAND() {
	emulate.Run(2, papers.Config{}, func(p *papers.PE) error {
		x := []uint8{0b1100, 0b1010}[p.Self()]
		r, err := p.NAND(x)
		if p.Self() == 0 && err == nil {
			fmt.Printf("NAND(1100, 1010) = %04b\n", r)
		}
		return err
	})
	// Output: NAND(1100, 1010) = 0111
}
