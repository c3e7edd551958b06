package backend_test

import (
	"fmt"

	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/lpt/backend"
)

// Open a real port by spec; the error, if any, says what to do.
func ExampleOpen() {
	port, err := backend.Open("ppdev:/dev/parport0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer port.Close()
	port.WriteData(lpt.Transparent)
	fmt.Printf("status %#02x\n", port.ReadStatus()&lpt.StatusPins)
}
