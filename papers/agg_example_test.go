package papers_test

import (
	"errors"
	"fmt"

	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/papers"
)

// Every PE contributes a value; every PE gets the sum, the maximum and its
// exclusive prefix sum. PE 0 prints.
func ExampleReduce() {
	err := emulate.Run(4, papers.Config{}, func(p *papers.PE) error {
		v := int32(10 * (p.Self() + 1)) // 10, 20, 30, 40
		sum, err := papers.Reduce(p, papers.Sum, v)
		if err != nil {
			return err
		}
		top, err := papers.Reduce(p, papers.Max, v)
		if err != nil {
			return err
		}
		before, err := papers.Scan(p, papers.Sum, v, papers.Exclusive)
		if err != nil {
			return err
		}
		if p.Self() == 2 {
			fmt.Println(sum, top, before)
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output: 100 40 30
}

// A counted reduction after PE 2 has left: the sum covers the PEs that
// take part, and the count says who delivered (SPIDER's delivered/total).
func ExampleReduceCount() {
	err := emulate.Run(4, papers.Config{}, func(p *papers.PE) error {
		if p.Self() == 2 {
			return p.Leave() // the others learn it from an interrupt
		}
		for {
			err := p.Barrier()
			var ie *papers.InterruptError
			if errors.As(err, &ie) {
				break // the group changed: PE 2 left (ie.Left)
			}
			if err != nil {
				return err
			}
		}
		sum, count, err := papers.ReduceCount(p, papers.Sum, int32(p.Self()+1))
		if p.Self() == 0 && err == nil {
			fmt.Println(sum, count)
		}
		return err
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output: 7 3/4 (PE 2 missing)
}

// A programmable combine over byte blocks: every PE sets its own byte,
// and the OR of the blocks, merged byte by byte in PE order, reaches every
// PE.
func ExampleReduceFunc() {
	err := emulate.Run(3, papers.Config{}, func(p *papers.PE) error {
		var block [3]byte
		block[p.Self()] = byte('a' + p.Self())
		merged, err := papers.ReduceFunc(p, block, func(a, b [3]byte) [3]byte {
			for i := range a {
				a[i] |= b[i]
			}
			return a
		})
		if p.Self() == 0 && err == nil {
			fmt.Printf("%s\n", merged[:])
		}
		return err
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output: abc
}
