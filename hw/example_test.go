package hw_test

import (
	"fmt"

	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// The 4-PE board of the seed: eight 74LS chips, and where a PE's strobe
// line lands on them.
func ExampleNew() {
	b, err := hw.New(4)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range b.Components {
		if c.Part.Logic() {
			fmt.Printf("%s %-7s %s\n", c.Ref, c.Part.Name, c.Role)
		}
	}
	s0, _ := lpt.LineFor(lpt.Data, lpt.S0)
	fmt.Println(b.Trace(2, s0))
	// Output:
	// U1 74LS20  4-input NAND trees
	// U2 74LS20  4-input NAND trees
	// U3 74LS74  ready and interrupt flip-flops
	// U4 74LS125 ready buffers (P_SEL=0)
	// U5 74LS126 interrupt buffers (P_SEL=1)
	// U6 74LS40  data NAND buffers
	// U7 74LS40  data NAND buffers
	// U8 74LS244 LED drivers
	// J3 pin 8 on net PE2.D6, U1 pin 4 (74LS20 4-input NAND trees)
}

// SizeFor picks the smallest board for a PE count; the spare cables stay
// unplugged.
func ExampleSizeFor() {
	for _, pes := range []int{3, 6, 33} {
		size, err := hw.SizeFor(pes)
		fmt.Println(pes, size, err)
	}
	// Output:
	// 3 4 <nil>
	// 6 8 <nil>
	// 33 0 hw: no TTL_PAPERS board holds 33 PEs: boards are built for 1 to 32 PEs (sizes [4 8 16 32]; beyond 32 the seed recommends programmable logic)
}
