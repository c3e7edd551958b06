package emu_test

import (
	"fmt"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// A 4-PE board powered up with the barrier flip-flop set: RDYQ reads high
// until every PE shows S0, which clears it.
func ExamplePowerUp() {
	b, err := emu.New(4, emu.PowerUp{State: &emu.FlipFlops{Ready: true}})
	if err != nil {
		fmt.Println(err)
		return
	}
	q, _ := b.NetLevel(hw.NetRDYQ)
	fmt.Println("power-up RDYQ:", q)
	for k := 0; k < 4; k++ {
		p, _ := b.Port(k)
		p.WriteData(lpt.S0)
	}
	q, _ = b.NetLevel(hw.NetRDYQ)
	fmt.Println("every PE at S0, RDYQ:", q)
	b.Reset()
	q, _ = b.NetLevel(hw.NetRDYQ)
	fmt.Println("after Reset, RDYQ:", q)
	// Output:
	// power-up RDYQ: true
	// every PE at S0, RDYQ: false
	// after Reset, RDYQ: true
}
