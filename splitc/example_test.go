package splitc_test

import (
	"fmt"

	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/splitc"
)

// all_scan_add and all_reduce_to_one_max on three emulated PEs.
func Example() {
	emulate.Run(3, papers.Config{}, func(p *papers.PE) error {
		mine := float64(splitc.MYPROC(p)) + 0.5
		sum, err := splitc.AllScanAdd(p, mine)
		if err != nil {
			return err
		}
		hi, err := splitc.AllReduceToOneMax(p, int32(10*splitc.MYPROC(p)))
		if err != nil {
			return err
		}
		if splitc.MYPROC(p) == splitc.PROCS(p)-1 {
			fmt.Println("all_scan_add on the last PE:", sum, "all_reduce_to_one_max:", hi)
		}
		return nil
	})
	// Output:
	// all_scan_add on the last PE: 4.5 all_reduce_to_one_max: 20
}
