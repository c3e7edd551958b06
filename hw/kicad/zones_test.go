package kicad_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ttlpapers/ttlpapers/hw/kicad"
	"github.com/ttlpapers/ttlpapers/internal/testenv"
)

// TestZoneFillsAreCurrent has KiCad's zone filler fill each committed
// board's pours again, from the board without its fills (which
// TestCommittedFilesAreFresh proves is what the generator writes), and
// wants the committed fills exactly: a board whose routing changed without
// its fills made again fails here. Each pour must be filled.
func TestZoneFillsAreCurrent(t *testing.T) {
	testenv.SlowUnderRace(t, "KiCad's zone filler on every board")
	testenv.Long(t, "KiCad's zone filler on every board (minutes of CPU)")
	for _, b := range kicad.Routed() {
		base := kicad.BaseOf(b)
		src := boardFile(t, base)
		want := committedFills(t, base, src)
		got, err := kicad.FillZones(base, kicad.Unfill(src), committed(t, base, ".kicad_pro"), committed(t, base, ".kicad_dru"))
		if errors.Is(err, kicad.ErrNoZoneFiller) {
			testenv.Missing(t, "%v", err)
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(want) != 2 {
			t.Errorf("%s: %d pours filled, want 2 (GND front, supply back)", base, len(want))
		}
		for name, w := range want {
			if g := fmt.Sprint(fillPoints(got[name])); g != w {
				t.Errorf("%s: pour %q: KiCad fills it otherwise now (%d polygons): run `go run ./cmd/papersctl kicad`", base, name, len(got[name]))
			}
		}
	}
}

// committedFills is each filled zone's polygons in a board, by zone name.
func committedFills(t *testing.T, base string, src []byte) map[string]string {
	t.Helper()
	root, err := kicad.ParseExpr(string(src))
	if err != nil {
		t.Fatalf("%s: %v", base, err)
	}
	out := map[string]string{}
	for _, z := range root.Children("zone") {
		if f := z.Children("filled_polygon"); len(f) > 0 {
			out[z.Child("name").Arg(0)] = fmt.Sprint(fillPoints(f))
		}
	}
	return out
}

// fillPoints is each filled polygon's layer and corners, as written.
func fillPoints(fills []*kicad.Expr) [][]string {
	var out [][]string
	for _, f := range fills {
		p := []string{f.Child("layer").Arg(0)}
		for _, xy := range f.Child("pts").Children("xy") {
			p = append(p, xy.Arg(0), xy.Arg(1))
		}
		out = append(out, p)
	}
	return out
}
