package kicad_test

import (
	"fmt"
	"strings"

	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/hw/kicad"
)

// The bill of materials of the 4-PE board, chips only.
func ExampleBOM() {
	for _, row := range strings.Split(string(kicad.BOM(hw.MustNew(4))), "\n") {
		if strings.HasPrefix(row, "U") {
			f := strings.Split(row, ",")
			fmt.Println(f[0], f[1], f[3])
		}
	}
	// Output:
	// U1 U2 74LS20 2
	// U3 74LS74 1
	// U4 74LS125 1
	// U5 74LS126 1
	// U6 U7 74LS40 2
	// U8 74LS244 1
}
