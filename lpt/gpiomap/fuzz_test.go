package gpiomap

import (
	"strings"
	"testing"

	"github.com/ttlpapers/ttlpapers/lpt"
)

// piMapping is docs/hardware.md's Raspberry Pi wiring.
const piMapping = "nStrobe=GPIO4,D0=GPIO17,D1=GPIO18,D2=GPIO27,D3=GPIO22,D4=GPIO23,D5=GPIO24,D6=GPIO25,D7=GPIO5,nAck=GPIO6,Busy=GPIO12,PaperOut=GPIO13,Select=GPIO19,nAutoFd=GPIO16,nError=GPIO26,nInit=GPIO20,nSelectIn=GPIO21"

// FuzzParseMapping: ParseMapping never panics, and a mapping it accepts
// maps every line but nSelectIn, no pin twice, and reads back the same
// from its String form.
func FuzzParseMapping(f *testing.F) {
	f.Add(piMapping)
	f.Add(strings.TrimSuffix(piMapping, ",nSelectIn=GPIO21"))
	f.Add(strings.ReplaceAll(piMapping, "GPIO", "P1_"))
	f.Add("pin1=A,pin2=B")
	f.Add("D0=GPIO17,D0=GPIO18")
	f.Add("D0")
	f.Add(" , ,")
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMapping(s)
		if err != nil {
			return
		}
		pins := map[string]bool{}
		for i, l := range lpt.Lines {
			if m[i] == "" && !Optional(l) {
				t.Fatalf("ParseMapping(%q) leaves %s unmapped", s, l.Name)
			}
			if m[i] != "" && pins[strings.ToUpper(m[i])] {
				t.Fatalf("ParseMapping(%q) maps pin %s twice", s, m[i])
			}
			pins[strings.ToUpper(m[i])] = m[i] != ""
		}
		if n, err := ParseMapping(m.String()); err != nil || n != m {
			t.Fatalf("ParseMapping(%q) = %v, which reads back as %v, %v", s, m, n, err)
		}
	})
}
