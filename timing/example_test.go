package timing_test

import (
	"fmt"

	"github.com/ttlpapers/ttlpapers/timing"
)

// ExampleTrial runs one trial of the NAND without the resample under the
// default parameters, and says which results were wrong and why.
func ExampleTrial() {
	v, err := timing.VariantsNamed([]string{"nand/no-resample"})
	if err != nil {
		panic(err)
	}
	r, err := timing.Trial(timing.DefaultParams(), v[0], 3, nil)
	if err != nil {
		panic(err)
	}
	for _, w := range r.Wrong {
		fmt.Printf("PE %d, NAND %d: read %04b, should be %04b (%s)\n", w.PE, w.Index, w.Got, w.Want, w.Cause)
	}
	// Output:
	// PE 2, NAND 5: read 1010, should be 1111 (stale)
}
