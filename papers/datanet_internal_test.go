package papers

import (
	"github.com/ttlpapers/ttlpapers/peset"
	"slices"
	"testing"
)

// TestNamed: what a roll call names from the board's answer and the data
// network's.
func TestNamed(t *testing.T) {
	silent := func(k int) Absence { return Absence{PE: k, How: Silent} }
	failed := func(k int) Absence { return Absence{PE: k, How: Failed, Cause: "timed out"} }
	died := func(k int) Absence { return Absence{PE: k, How: Died} }
	for _, c := range []struct {
		name   string
		board  peset.Set
		dn     []Absence
		want   peset.Set
		wantDN []int
	}{
		{"the board names one PE", 1 << 1, []Absence{silent(1), silent(2)}, 1 << 1, nil},
		{"no data network answer", 1<<1 | 1<<5, nil, 1<<1 | 1<<5, nil},
		{"a shared line: the data network picks", 1<<1 | 1<<5, []Absence{died(1)}, 1 << 1, []int{1}},
		{"every line answered", 0, []Absence{silent(1)}, 1 << 1, []int{1}},
		{"narrowed to the board's candidates", 1<<1 | 1<<2, []Absence{silent(1), silent(6)}, 1 << 1, []int{1}},
		{"no meeting: the data network's", 1<<1 | 1<<2, []Absence{silent(5)}, 1 << 5, []int{5}},
		// A late roll call (this PE starved of the CPU): the others gave
		// up and left failing before it; the silent one is the cause.
		{"those that left failing after a late roll call", 1<<1 | 1<<2 | 1<<3, []Absence{silent(1), failed(2), failed(3)}, 1 << 1, []int{1}},
		{"only failed ones", 1<<2 | 1<<3, []Absence{failed(2), failed(3)}, 1<<2 | 1<<3, []int{2, 3}},
	} {
		got, dn := named(c.board, c.dn)
		var pes []int
		for _, a := range dn {
			pes = append(pes, a.PE)
		}
		if got != c.want || !slices.Equal(pes, c.wantDN) {
			t.Errorf("%s: named(%v, %v) = %v, %v; want %v, %v", c.name, c.board, c.dn, got, pes, c.want, c.wantDN)
		}
	}
}
