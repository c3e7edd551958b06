package lpt

import "testing"

// TestInversions checks the register↔pin mapping against docs/registers.md,
// "Inversions", pin by pin.
func TestInversions(t *testing.T) {
	// All register bits 0: the inverted control lines are high, the rest low.
	p := OutputPins(0, 0)
	for pin, want := range map[int]bool{1: true, 14: true, 16: false, 17: true, 2: false, 9: false} {
		if p.High(pin) != want {
			t.Errorf("registers 0: pin %d high=%v, want %v", pin, p.High(pin), want)
		}
	}
	p = OutputPins(0xff, ControlPins)
	for pin := 2; pin <= 9; pin++ {
		if !p.High(pin) {
			t.Errorf("data 0xff: pin %d low", pin)
		}
	}
	for pin, want := range map[int]bool{1: false, 14: false, 16: true, 17: false} {
		if p.High(pin) != want {
			t.Errorf("control 0x0f: pin %d high=%v, want %v", pin, p.High(pin), want)
		}
	}
	// Each data bit drives exactly its own pin.
	for bit := 0; bit < 8; bit++ {
		if got := OutputPins(1<<bit, 0) &^ OutputPins(0, 0); got != 1<<(bit+2) {
			t.Errorf("data bit %d drives pins %b, want pin %d", bit, got, bit+2)
		}
	}
	// Status: every input pin high reads 0x78 plus the low bits (Busy inverted).
	if s := StatusFromPins(InputPins) & StatusPins; s != 0x78 {
		t.Errorf("all inputs high: status %#x, want 0x78", s)
	}
	if s := StatusFromPins(0) & StatusPins; s != 0x80 {
		t.Errorf("all inputs low: status %#x, want 0x80", s)
	}
	if s := StatusFromPins(Pins(0).With(15, true)) & StatusPins; s != StatusError|StatusBusy {
		t.Errorf("pin 15 high: status %#x", s)
	}
}

func TestLineTable(t *testing.T) {
	seen := map[int]bool{}
	for _, l := range Lines {
		if seen[l.Pin] {
			t.Errorf("pin %d twice", l.Pin)
		}
		seen[l.Pin] = true
		got, err := LineByName(l.Name)
		if err != nil || got != l {
			t.Errorf("LineByName(%q) = %v, %v", l.Name, got, err)
		}
		if byPin, ok := LineByPin(l.Pin); !ok || byPin != l {
			t.Errorf("LineByPin(%d) = %v", l.Pin, byPin)
		}
	}
	for _, l := range Lines {
		if got, ok := LineFor(l.Reg, l.Mask); !ok || got != l {
			t.Errorf("LineFor(%v, %#x) = %v, %v; want %v", l.Reg, l.Mask, got, ok, l)
		}
	}
	if l, ok := LineFor(Status, 0x01); ok {
		t.Errorf("LineFor(Status, 0x01) = %v: status bit 0 is not a pin", l)
	}
	if l, _ := LineFor(Data, S1); l.Name != "D7" {
		t.Errorf("LineFor(Data, S1) = %v, want D7", l)
	}
	if len(seen) != 17 {
		t.Errorf("%d lines, want 17", len(seen))
	}
	if l, err := LineByName("p_s0"); err != nil || l.Name != "D6" {
		t.Errorf("LineByName(p_s0) = %v, %v", l, err)
	}
	for _, name := range []string{"RDY", "P_INT", "int", "P_RDY/P_INT"} {
		if l, err := LineByName(name); err != nil || l.Name != "Busy" {
			t.Errorf("LineByName(%q) = %v, %v; want Busy", name, l, err)
		}
	}
	if _, err := LineByName("D9"); err == nil {
		t.Error("LineByName(D9) succeeded")
	}
	// The seed's signal masks agree with the table.
	for name, mask := range map[string]uint8{"P_S0": S0, "P_S1": S1, "P_LG": LG, "P_LR": LR, "P_NAK": NAK, "P_IRQ": IRQ, "P_SEL": SEL} {
		if l, _ := LineByName(name); l.Mask != mask {
			t.Errorf("%s: table mask %#x, constant %#x", name, l.Mask, mask)
		}
	}
}

// Pin numbers outside a Pins word neither panic nor touch other pins.
func TestPinsOutOfRange(t *testing.T) {
	p := Pins(0).With(2, true)
	for _, pin := range []int{-1, 32, 99} {
		if p.High(pin) {
			t.Errorf("High(%d) is true", pin)
		}
		if got := p.With(pin, true).With(pin, false); got != p {
			t.Errorf("With(%d) changed %b to %b", pin, p, got)
		}
	}
}
