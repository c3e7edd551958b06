package port

import (
	"sync"
	"testing"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// TestStopWins: once the signal handler has stopped a real port — announced
// the departure and gone transparent — the PE goroutine's writes, racing
// with it, no longer reach the port, which stays transparent.
func TestStopWins(t *testing.T) {
	b, err := emu.New(2)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := b.Port(0)
	if err != nil {
		t.Fatal(err)
	}
	other, err := b.Port(1) // a PE that has left already: the announcement completes alone
	if err != nil {
		t.Fatal(err)
	}
	other.WriteData(lpt.Transparent)
	other.WriteControl(0)
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
	if d, c := raw.ReadData(), raw.ReadControl(); d != lpt.Transparent || c != 0 {
		t.Errorf("after stop and 20000 racing writes: data %#02x control %#02x, want transparent %#02x, 0", d, c, lpt.Transparent)
	}
}
