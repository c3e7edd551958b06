package selftest

import (
	"slices"
	"strings"
	"testing"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// TestTwoFaults: two faults at once are diagnosed as that pair, and the
// report never says both that no fault explains the readings and that
// some match them (it did: "no single fault explains the readings" above
// "these readings match PE0.D6=stuck0, …").
func TestTwoFaults(t *testing.T) {
	d6, _ := lpt.LineByName("D6")
	busy, _ := lpt.LineByName("Busy")
	for _, faults := range [][]emu.Fault{
		{{PE: 2, Line: d6, Kind: emu.Stuck0}, {PE: 3, Kind: emu.Unplugged}},
		{{PE: 1, Line: busy, Kind: emu.Stuck1}, {PE: 3, Kind: emu.Unplugged}},
	} {
		r := runJSON(t, Config{PEs: 4, Faults: faults})
		var diag *jsonCheck
		for i, c := range r.Checks {
			if strings.HasPrefix(c.Name, "diagnosis:") {
				diag = &r.Checks[i]
			}
			if strings.Contains(c.Detail, "match") && strings.Contains(c.Name+c.Detail, "no single fault") {
				t.Errorf("%v: %q contradicts itself: %s", faults, c.Name, c.Detail)
			}
		}
		if diag == nil || !strings.HasPrefix(diag.Name, "diagnosis: two faults at once") {
			t.Fatalf("%v: no two-fault diagnosis:%s", faults, dump(r))
		}
		for _, f := range faults {
			if !slices.Contains(diag.Suspects, f.String()) || !slices.Contains(diag.PEs, f.PE) {
				t.Errorf("%v: diagnosis %q lacks %v (suspects %v, PEs %v)", faults, diag.Name, f, diag.Suspects, diag.PEs)
			}
		}
	}
}
