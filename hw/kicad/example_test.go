package kicad_test

import (
	"fmt"
	"os"
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

// The committed 32-PE board file read back: which pads carry RDYQ, the
// flip-flop's output, which four buffers of a line driver pass on, each to
// the Busy multiplexers of eight PEs.
func ExampleReadPCB() {
	pcb, err := os.ReadFile("../../kicad/ttl_papers_32pe/ttl_papers_32pe.kicad_pcb")
	if err != nil {
		panic(err)
	}
	nets, footprints, err := kicad.ReadPCB(pcb)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(footprints), "footprints; U3 is", footprints["U3"])
	fmt.Println("RDYQ:", nets["RDYQ"])
	// Output:
	// 279 footprints; U3 is Package_DIP:DIP-14_W7.62mm
	// RDYQ: [{U20 5} {U21 2} {U21 4} {U21 6} {U21 8}]
}
