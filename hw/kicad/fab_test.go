package kicad_test

import (
	"archive/zip"
	"bytes"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ttlpapers/ttlpapers/hw/kicad"
)

// TestFabOutputsAreCurrent makes every routed board's fabrication outputs
// afresh with kicad-cli and compares them with the committed ones in its
// fab/ folder, and the committed zip's contents with them: what a builder
// sends to a board house is the board in the repository.
func TestFabOutputsAreCurrent(t *testing.T) {
	cli := kicadCLI(t)
	for _, b := range kicad.Routed() {
		base := kicad.BaseOf(b)
		want, err := kicad.FabFiles(cli, boardCopy(t, base, boardFile(t, base)))
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(kicadDir, base, kicad.FabDir)
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatalf("%v: run `go run ./cmd/papersctl kicad --fab`", err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if g, w := names, slices.Sorted(maps.Keys(want)); !slices.Equal(g, w) {
			t.Errorf("%s has %v, want %v: run `go run ./cmd/papersctl kicad --fab`", dir, g, w)
		}
		zipName := base + "-fab.zip"
		for name, w := range want {
			got, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil || name == zipName {
				continue
			}
			if !bytes.Equal(got, w) {
				t.Errorf("%s/%s is stale: run `go run ./cmd/papersctl kicad --fab` and commit the result", dir, name)
			}
		}
		// The zip: the same files, the zip aside.
		z, err := os.ReadFile(filepath.Join(dir, zipName))
		if err != nil {
			t.Fatal(err)
		}
		zr, err := zip.NewReader(bytes.NewReader(z), int64(len(z)))
		if err != nil {
			t.Fatalf("%s: %v", zipName, err)
		}
		inZip := map[string]bool{}
		for _, f := range zr.File {
			inZip[f.Name] = true
			r, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(r)
			r.Close()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want[f.Name]) {
				t.Errorf("%s: %s differs from the board's output: run `go run ./cmd/papersctl kicad --fab`", zipName, f.Name)
			}
		}
		if len(inZip) != len(want)-1 {
			t.Errorf("%s holds %d files, want the %d others of the fab folder", zipName, len(inZip), len(want)-1)
		}
	}
}

// TestFabNoteMeasures: the fab note's figures on a small board whose
// smallest features are known: a 0.225 mm gap between two tracks of
// different nets (a track of one of them under the other on the far
// layer does not count), a rectangular pad turned by 90° whose 0.1 mm
// ring is the smallest, and holes 1.74 mm apart.
func TestFabNoteMeasures(t *testing.T) {
	pcb := `(kicad_pcb (net 0 "") (net 1 "A") (net 2 "B")
  (footprint "X" (at 10 10)
    (pad "1" thru_hole circle (at 0 0) (size 1.6 1.6) (drill 0.8) (layers *.Cu *.Mask) (net 1 "A"))
    (pad "2" thru_hole rect (at 2.54 0 90) (size 1.6 1.0) (drill 0.8) (layers *.Cu *.Mask) (net 2 "B")))
  (segment (start 0 0) (end 5 0) (width 0.25) (layer "F.Cu") (net 1))
  (segment (start 0 0.5) (end 5 0.5) (width 0.3) (layer "F.Cu") (net 2))
  (segment (start 0 0) (end 5 0) (width 0.25) (layer "B.Cu") (net 2))
  (via (at 20 20) (size 0.8) (drill 0.4) (layers "F.Cu" "B.Cu") (net 1)))`
	note, err := kicad.FabNote("test", []byte(pcb), 30, 30, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"smallest track width           0.250 mm",
		"smallest copper gap            0.225 mm",
		"smallest plated hole           0.800 mm (2 component holes)",
		"vias                           1, 0.800 mm pad, 0.400 mm hole",
		"smallest annular ring          0.100 mm",
		"smallest hole-to-hole gap      1.740 mm",
	} {
		if !strings.Contains(string(note), want) {
			t.Errorf("the fab note does not say %q:\n%s", want, note)
		}
	}
}
