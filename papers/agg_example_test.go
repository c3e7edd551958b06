package papers_test

import (
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
