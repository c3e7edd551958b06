package emu_test

import (
	"fmt"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// A 4-PE board in memory: each PE's port is the printer port its driver
// would use, and the board answers as its 74LS circuit does.
func ExampleNew() {
	b, err := emu.New(4)
	if err != nil {
		fmt.Println(err)
		return
	}
	ports := make([]*emu.Port, b.PEs())
	for k := range ports {
		if ports[k], err = b.Port(k); err != nil {
			fmt.Println(err)
			return
		}
	}
	// Each PE drives its NAND contribution on D0-D3 (the others 1111);
	// every PE reads the NAND of all four on its status lines.
	for _, p := range ports {
		p.WriteData(lpt.Transparent)
	}
	ports[1].WriteData(lpt.Transparent&^lpt.DataMask | 0b1010)
	fmt.Printf("NAND: %04b\n", ports[3].ReadStatus()>>lpt.InputShift&lpt.DataMask)

	// The LED drivers follow each PE's LG and LR bits.
	ports[1].WriteData(lpt.Transparent | lpt.LG)
	ports[2].WriteData(lpt.Transparent | lpt.LR)
	fmt.Println("LEDs:", b.LED(0), b.LED(1), b.LED(2))
	// Output:
	// NAND: 0101
	// LEDs: dark green red
}

// A fault sits on the cable: with PE 3's D0 line stuck low the board sees a
// 0 from it whatever its program writes.
func ExampleBoard_Inject() {
	b, _ := emu.New(4)
	d0, _ := lpt.LineByName("D0")
	if err := b.Inject(emu.Fault{PE: 3, Line: d0, Kind: emu.Stuck0}); err != nil {
		fmt.Println(err)
		return
	}
	var p0 *emu.Port
	for k := 0; k < b.PEs(); k++ {
		p, err := b.Port(k)
		if err != nil {
			fmt.Println(err)
			return
		}
		defer p.Close()
		p.WriteData(lpt.Transparent) // every PE contributes 1111
		if k == 0 {
			p0 = p
		}
	}
	fmt.Printf("NAND: %04b\n", p0.ReadStatus()>>lpt.InputShift&lpt.DataMask)
	// Output: NAND: 0001
}
