package papers_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/papers"
)

// TestCheckInNamesStuckInput: a PE whose own status input (one of the four
// that carry the NAND) is stuck at either level reads the board wrong
// alone. Every PE fails its check-in at once (well within the check-in
// timeout, which would otherwise pass in silence) naming that PE's input
// and its pin, and no PE blames a healthy PE or a data line, also when PE
// 3 starts after the others found it; with the input repaired, the same
// ports check in.
func TestCheckInNamesStuckInput(t *testing.T) {
	const n, victim = 4, 2
	for _, line := range []string{"nError", "Select", "PaperOut", "nAck", "late nAck"} {
		for _, level := range []string{"stuck0", "stuck1"} {
			name, late := strings.CutPrefix(line, "late ")
			fault := fmt.Sprintf("PE%d.%s=%s", victim, name, level)
			b, err := emu.New(n)
			if err != nil {
				t.Fatal(err)
			}
			if late { // PE 3's port as an earlier run's end left it: the others meet without it
				if err := setPorts(b, n, func(k int) leftover { return leftovers[2] }, false); err != nil {
					t.Fatal(err)
				}
			}
			f, err := emu.ParseFault(fault)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Inject(f); err != nil {
				t.Fatal(err)
			}
			errs := openAll(b, n, func(k int) papers.Config {
				if late && k == n-1 {
					time.Sleep(300 * time.Millisecond) // a stagger, not a bound
				}
				return papers.Config{PE: k, PEs: n, Timeout: time.Second, CheckInTimeout: time.Minute}
			})
			for k, err := range errs {
				var ie *papers.InputError
				if !errors.As(err, &ie) || ie.Faulty != 1<<victim || len(ie.Inputs) != 1 || ie.Inputs[0].PE != victim || ie.Inputs[0].Line != f.Line || ie.Inputs[0].Stuck != uint8(f.Kind) {
					t.Errorf("%s: PE %d: %v; want an InputError naming PE %d's %v stuck at %d", fault, k, err, victim, f.Line, f.Kind)
				}
			}
			if err := b.Repair(victim); err != nil {
				t.Fatal(err)
			}
			if err := errors.Join(openAll(b, n, func(k int) papers.Config {
				return papers.Config{PE: k, PEs: n, Timeout: time.Second, CheckInTimeout: time.Minute}
			})...); err != nil {
				t.Errorf("%s repaired: the next run: %v", fault, err)
			}
		}
	}
}
