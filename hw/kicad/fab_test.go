package kicad_test

import (
	"archive/zip"
	"bytes"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
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
