package papers_test

import (
	"fmt"

	"github.com/ttlpapers/ttlpapers/emu"
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

// SetLED shows a colour on the PE's front-panel LED; the emulated board's
// LED read-out sees it. Orange is the seed's "special" status.
func ExamplePE_SetLED() {
	board, _ := emu.New(2)
	emulate.RunOn(board, 2, papers.Config{}, func(p *papers.PE) error {
		if p.Self() == 0 {
			fmt.Println("running:", board.LED(0))
			if err := p.SetLED(papers.Orange); err != nil {
				return err
			}
			fmt.Println("special:", board.LED(0))
		}
		return p.Barrier()
	})
	fmt.Println("closed:", board.LED(0)) // not in use
	// Output:
	// running: green
	// special: orange
	// closed: dark
}
