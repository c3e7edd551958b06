package vcd_test

import (
	"os"

	"github.com/ttlpapers/ttlpapers/emu/vcd"
)

// ExampleNewWriter writes a two-signal waveform: a net whose name is not a
// Verilog identifier (so it is escaped) and an 8-bit register.
func ExampleNewWriter() {
	w, err := vcd.NewWriter(os.Stdout, "1ns", "")
	if err != nil {
		panic(err)
	}
	w.Scope("board")
	d6 := w.Wire("PE2.D6", 1)
	st := w.Reg("status", 8)
	w.Upscope()
	w.Begin(map[vcd.Var]vcd.Value{st: vcd.X})
	w.Set(15, d6, vcd.Bool(true))
	w.Set(40, st, vcd.Bits(0x7f))
	if err := w.Close(50); err != nil {
		panic(err)
	}
	// Output:
	// $version ttlpapers $end
	// $timescale 1ns $end
	// $scope module board $end
	// $var wire 1 ! \PE2.D6 $end
	// $var reg 8 " status $end
	// $upscope $end
	// $enddefinitions $end
	// #0
	// $dumpvars
	// 0!
	// bx "
	// $end
	// #15
	// 1!
	// #40
	// b1111111 "
	// #50
}
