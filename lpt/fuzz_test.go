package lpt

import (
	"fmt"
	"testing"
)

// FuzzLineByName: LineByName never panics, and every name it accepts
// names one of the 17 lines, which its own name finds again.
func FuzzLineByName(f *testing.F) {
	for _, l := range Lines {
		f.Add(l.Name)
		f.Add(l.Signal)
		f.Add(fmt.Sprintf("pin%d", l.Pin))
	}
	for _, s := range []string{"S0", "RDY", "busy", "D9", "pin0", "pin", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := LineByName(s)
		if err != nil {
			return
		}
		known := false
		for _, k := range Lines {
			known = known || k == l
		}
		if !known {
			t.Fatalf("LineByName(%q) = %+v, not one of Lines", s, l)
		}
		if m, err := LineByName(l.Name); err != nil || m != l {
			t.Fatalf("LineByName(%q) = %s, whose name finds %+v, %v", s, l.Name, m, err)
		}
	})
}
