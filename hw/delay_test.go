package hw

import "testing"

// TestDelays checks the delay data every logic part carries for the timed
// emulator: each path the part has is set, ordered Min <= Typ <= Max, and
// the paths a part lacks are zero.
func TestDelays(t *testing.T) {
	check := func(p *Part, path string, d Delay, want bool) {
		t.Helper()
		switch {
		case !want && d != (Delay{}):
			t.Errorf("%s has a %s delay %v but no such path", p.Name, path, d)
		case want && !(0 < d.Min && d.Min <= d.Typ && d.Typ <= d.Max):
			t.Errorf("%s %s delay %v: want 0 < Min <= Typ <= Max", p.Name, path, d)
		}
	}
	for _, p := range Parts {
		dff, enable := false, false
		for _, u := range p.Units {
			dff = dff || u.Func == FuncDFF
			enable = enable || u.Enable != 0
		}
		check(p, "input", p.Delay, true)
		check(p, "clock", p.ClockDelay, dff)
		check(p, "enable", p.EnableDelay, enable)
	}
}
