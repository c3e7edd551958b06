package emu

import (
	"testing"

	"github.com/ttlpapers/ttlpapers/lpt"
)

// FuzzParseFault: ParseFault never panics, and a fault it accepts is one
// the board can take (a PE id, a known line, a known kind) and reads back
// the same from its String form.
func FuzzParseFault(f *testing.F) {
	for _, s := range []string{"PE2.D6=stuck0", "PE1=unplugged", "PE0.Busy=stuck0", "PE2.nAck=stuck1", "PE5=unplugged",
		"PE0.nStrobe=stuck0", "pe3.S1=STUCK1", "PE1.P_RDY=stuck0", "PE7.pin11=stuck1", "PE1.D9=stuck0", "PE=unplugged", "PE-1=unplugged", "PE1.D6"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		x, err := ParseFault(s)
		if err != nil {
			return
		}
		if x.PE < 0 || x.Kind > Unplugged {
			t.Fatalf("ParseFault(%q) = %+v: PE or kind out of range", s, x)
		}
		if x.Kind != Unplugged {
			if l, err := lpt.LineByName(x.Line.Name); err != nil || l != x.Line {
				t.Fatalf("ParseFault(%q) gives line %+v, not one of lpt.Lines", s, x.Line)
			}
		}
		y, err := ParseFault(x.String())
		if err != nil || y != x {
			t.Fatalf("ParseFault(%q) = %v, which reads back as %+v, %v", s, x, y, err)
		}
	})
}
