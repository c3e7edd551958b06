package spmd

import (
	"sync"
	"testing"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// TestStopWins: once the signal handler has stopped a real port, the PE
// goroutine's writes, racing with it, no longer reach the port, which stays
// stalled with the interrupt request raised.
func TestStopWins(t *testing.T) {
	b, err := emu.New(2)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := b.Port(0)
	if err != nil {
		t.Fatal(err)
	}
	g := &guardedPort{Port: raw}
	var wg sync.WaitGroup
	start := make(chan struct{})
	wg.Go(func() { // the PE: strobe flips, as in a barrier loop
		<-start
		v := uint8(lpt.S1 | lpt.LG | lpt.DataMask)
		for range 20000 {
			v ^= lpt.Strobes
			g.WriteData(v)
			g.WriteControl(lpt.NAK)
		}
	})
	close(start)
	g.stop()
	wg.Wait()
	if d, c := raw.ReadData(), raw.ReadControl(); d != lpt.LR|lpt.DataMask || c != lpt.NAK|lpt.IRQ {
		t.Errorf("after stop and 20000 racing writes: data %#02x control %#02x, want the stall %#02x, %#02x", d, c, lpt.LR|lpt.DataMask, lpt.NAK|lpt.IRQ)
	}
}
