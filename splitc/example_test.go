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

// The Libsplit-C report's §4.4 example: a flag on every PE, allocated as a
// spread array, set by the PE to the left.
func ExampleAllSpreadMalloc() {
	err := emulate.Run(4, papers.Config{}, func(p *papers.PE) error {
		m, err := splitc.Attach(p)
		if err != nil {
			return err
		}
		sptr, err := splitc.AllSpreadMalloc[int32](m, splitc.PROCS(p))
		if err != nil {
			return err
		}
		// sptr[(MYPROC+1)%PROCS] = 1
		if err := splitc.Write(m, sptr.At((splitc.MYPROC(p)+1)%splitc.PROCS(p)), 1); err != nil {
			return err
		}
		if err := splitc.Barrier(p); err != nil {
			return err
		}
		sum, err := splitc.AllReduceToOneAdd(p, splitc.Local(m, sptr)[0])
		if p.Self() == 0 {
			fmt.Println("flags set:", sum)
		}
		return err
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output: flags set: 4
}
