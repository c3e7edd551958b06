package emulate_test

import (
	"fmt"

	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/papers"
)

// Four PEs on the emulated board: a barrier, then a vote in which the even
// PEs say yes. Every PE gets the same mask.
func ExampleRun() {
	err := emulate.Run(4, papers.Config{}, func(p *papers.PE) error {
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
