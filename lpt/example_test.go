package lpt_test

import (
	"errors"
	"fmt"

	"github.com/ttlpapers/ttlpapers/lpt"
)

// The line table names every pin, by its standard name, its TTL_PAPERS
// signal or its DB-25 number.
func ExampleLineByName() {
	for _, name := range []string{"S0", "P_RDY", "nStrobe", "pin12"} {
		l, err := lpt.LineByName(name)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%-7s → %v, %v bit %#02x, inverted %v, carries %s\n", name, l, l.Reg, l.Mask, l.Inverted, l.Signal)
	}
	// Output:
	// S0      → D6 (DB-25 pin 8), data bit 0x40, inverted false, carries P_S0
	// P_RDY   → Busy (DB-25 pin 11), status bit 0x80, inverted true, carries P_RDY/P_INT
	// nStrobe → nStrobe (DB-25 pin 1), control bit 0x01, inverted true, carries P_NAK
	// pin12   → PaperOut (DB-25 pin 12), status bit 0x20, inverted false, carries P_I2
}

// Code that names lines by the signal they carry derives them from the
// table.
func ExampleLineFor() {
	l, _ := lpt.LineFor(lpt.Control, lpt.IRQ)
	fmt.Println("P_IRQ is on", l)
	// Output: P_IRQ is on nAutoFd (DB-25 pin 14)
}

// OutputPins applies the SPP inversions: the register values a driver
// writes become the pin levels the board sees.
func ExampleOutputPins() {
	pins := lpt.OutputPins(lpt.S1|lpt.LG|0x5, lpt.NAK|lpt.SEL)
	for _, name := range []string{"D7", "D6", "D4", "D0", "D1", "nStrobe", "nInit", "nAutoFd"} {
		l, _ := lpt.LineByName(name)
		fmt.Printf("%s:%v ", name, map[bool]string{false: "low", true: "high"}[pins.High(l.Pin)])
	}
	fmt.Println()
	// Output: D7:high D6:low D4:high D0:high D1:low nStrobe:low nInit:high nAutoFd:high
}

// A backend whose register operations cannot return errors records the
// first in a StickyError and returns it from Err.
func ExampleStickyError() {
	var sticky lpt.StickyError
	sticky.Set(errors.New("ioctl PPWDATA: input/output error"))
	sticky.Set(errors.New("a later failure"))
	fmt.Println(sticky.Err())
	// Output: ioctl PPWDATA: input/output error
}
