package peset_test

import (
	"fmt"

	"github.com/ttlpapers/ttlpapers/peset"
)

// Errors name the PEs they are about in one way everywhere: a set from a
// vote or a stall report, or from a list.
func ExampleSet() {
	fmt.Println(peset.Set(1 << 3))
	fmt.Println(peset.Set(1<<1 | 1<<3))
	fmt.Println(peset.Set(1<<1 | 1<<3).Members())
	fmt.Println(peset.Of(4, 2))
	fmt.Println(peset.Of(4, 2).Has(4), peset.Of(4, 2).Has(3), peset.Of(4, 2).Len())
	// Output:
	// PE 3
	// PEs 1, 3
	// [1 3]
	// PEs 2, 4
	// true false 2
}
