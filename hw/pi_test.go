package hw_test

import (
	"testing"

	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/lpt/gpiomap"
)

// TestPiAdapter follows every port line from the adapter's DB-25 to the
// Pi's header: straight for the Pi's outputs, through a 74LVC245 buffer,
// A to B, for its inputs; and checks the shifter's supply, direction and
// enable, and that no Pi pin meets a 5 V net.
func TestPiAdapter(t *testing.T) {
	b, err := hw.PiAdapter()
	if err != nil {
		t.Fatal(err)
	}
	header, err := gpiomap.RaspberryPi.HeaderPins()
	if err != nil {
		t.Fatal(err)
	}
	u := b.Component("U1")
	if u == nil || u.Part != hw.LVC245 {
		t.Fatalf("U1 is %v, want the 74LVC245", u)
	}
	on := func(ref string, pin int) string {
		if n := b.NetOf(hw.Node{Ref: ref, Pin: pin}); n != nil {
			return n.Name
		}
		return ""
	}
	for i, l := range lpt.Lines {
		port := on("J1", l.Pin)
		if port == "" {
			t.Errorf("%v: not connected on the adapter", l)
			continue
		}
		pi := on("J2", header[i])
		if l.Output() {
			if pi != port {
				t.Errorf("%v (Pi output): DB-25 on %s, header pin %d on %s", l, port, header[i], pi)
			}
			continue
		}
		// Find the A input on the port's net; its B output must be the
		// header pin's net.
		found := false
		for a := 2; a <= 9; a++ {
			if on("U1", a) == port {
				found = true
				if got := on("U1", 20-a); got != pi || pi == "" || pi == port {
					t.Errorf("%v (Pi input): U1 A%d on %s, B%d on %s, header pin %d on %s", l, a-2, port, a-2, got, header[i], pi)
				}
			}
		}
		if !found {
			t.Errorf("%v (Pi input): not buffered by U1", l)
		}
	}
	for _, c := range []struct {
		pin  int
		want string
	}{{20, hw.NetPi3V3}, {1, hw.NetPi3V3}, {10, hw.GND}, {19, hw.GND}} {
		if got := on("U1", c.pin); got != c.want {
			t.Errorf("U1 pin %d on %q, want %s", c.pin, got, c.want)
		}
	}
	for _, p := range gpiomap.Pi5V {
		if got := on("J2", p); got != "" {
			t.Errorf("the Pi's 5 V (header pin %d) is on %s: the adapter must not touch it", p, got)
		}
	}
	if b.Net(hw.VCC) != nil {
		t.Error("the adapter has the board's VCC: it must take no 5 V")
	}
}
