package timing

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ttlpapers/ttlpapers/emu/vcd"
)

var update = flag.Bool("update", false, "rewrite the pictures in docs/ (go test ./timing -run TestDocsPictures -update)")

// TestDocsPictures draws the pictures of docs/timing.md from recorded
// trials, with the default parameters: the first trial in which the NAND
// without the resample reads a stale result, and the same trial (same
// cables, delays and data) with the driver's 5-operation NAND, at the same
// PE and operation. Without -update it checks that the committed pictures
// are what the code draws now.
func TestDocsPictures(t *testing.T) {
	p := DefaultParams()
	stale := firstStale(t, p)
	saved, k, op := firstSaved(t, p)
	for _, c := range []struct {
		file, variant, title string
		trial, k, op         int
	}{
		{"timing-race.svg", "nand/no-resample", "Without the resample: PE %d takes the NAND from the read that sees ready (trial %d, NAND %d)", stale, -1, -1},
		{"timing-shipped.svg", "nand/shipped", "The shipped 5-operation NAND: PE %d resamples (trial %d, NAND %d)", saved, k, op},
	} {
		var rec bytes.Buffer
		r, err := Trial(p, variant(t, c.variant), c.trial, &rec)
		if err != nil {
			t.Fatal(err)
		}
		f, err := vcd.Parse(&rec)
		if err != nil {
			t.Fatal(err)
		}
		if c.k < 0 {
			c.k, c.op = Focus(r)
		}
		plot, err := Picture(r, c.k, c.op, fmt.Sprintf(c.title, c.k, c.trial, c.op))
		if err != nil {
			t.Fatal(err)
		}
		var svg bytes.Buffer
		if err := f.SVG(&svg, plot); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("..", "docs", c.file)
		if *update {
			if err := os.WriteFile(path, svg.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		old, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(old, svg.Bytes()) {
			t.Errorf("%s is not what the code draws now (%v): run go test ./timing -run TestDocsPictures -update", path, err)
		}
	}
}

// firstSaved finds the first trial, PE and NAND in which the driver's first
// read to see ready had the old NAND and its resample the right one.
func firstSaved(t *testing.T, p Params) (trial, pe, op int) {
	t.Helper()
	for i := range 200 {
		r, err := Trial(p, variant(t, "nand/shipped"), i, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, reads := range r.Reads {
			for n, rd := range reads {
				if rd.Ready >= 0 && rd.ReadyGot != rd.Want && rd.Got == rd.Want {
					return i, k, n
				}
			}
		}
	}
	t.Fatal("in 200 trials the driver's resample never mattered")
	return 0, 0, 0
}
