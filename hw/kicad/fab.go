package kicad

import (
	"archive/zip"
	"bytes"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// FabLayers are the layers plotted as Gerbers: what a board house needs
// for a two-layer board with solder mask and silkscreen.
var FabLayers = []string{"F.Cu", "B.Cu", "F.Mask", "B.Mask", "F.SilkS", "B.SilkS", "Edge.Cuts"}

// volatile matches the header lines KiCad's plotters stamp with the date
// or their own version: left out, the outputs depend on the board alone,
// so a test can regenerate them and compare. Gerber and Excellon readers
// need none of them (they are comments and optional attributes).
var volatile = regexp.MustCompile(`(?m)^.*(CreationDate|GenerationSoftware|Created by KiCad|DRILL file \{KiCad).*\n`)

// FabFiles makes the fabrication outputs of one board with kicad-cli (the
// path of KiCad 9's command-line tool): Gerbers of FabLayers, the Excellon
// drill file, the position file, and a zip of them with the BOM, as board
// houses take them. The board file's folder must hold its project (for the
// design rules) and its BOM (base-bom.csv). Names are relative to a fab/
// folder beside the board.
func FabFiles(cli, pcbPath string) (map[string][]byte, error) {
	base := strings.TrimSuffix(filepath.Base(pcbPath), ".kicad_pcb")
	bom, err := os.ReadFile(filepath.Join(filepath.Dir(pcbPath), base+"-bom.csv"))
	if err != nil {
		return nil, fmt.Errorf("kicad: the fab outputs include the BOM: %w (run `papersctl kicad` first)", err)
	}
	tmp, err := os.MkdirTemp("", "ttlpapers-fab-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	runs := [][]string{
		{"pcb", "export", "gerbers", "--layers", strings.Join(FabLayers, ","), "--subtract-soldermask", "-o", tmp + "/", pcbPath},
		{"pcb", "export", "drill", "--format", "excellon", "-o", tmp + "/", pcbPath},
		{"pcb", "export", "pos", "--format", "csv", "--units", "mm", "--side", "both", "-o", filepath.Join(tmp, base+"-pos.csv"), pcbPath},
	}
	for _, args := range runs {
		if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("kicad: %s %s: %v\n%s", filepath.Base(cli), strings.Join(args[:3], " "), err, out)
		}
	}
	files := map[string][]byte{base + "-bom.csv": bom}
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".gbrjob") {
			continue // KiCad's job file: dated, and no board house needs it
		}
		src, err := os.ReadFile(filepath.Join(tmp, e.Name()))
		if err != nil {
			return nil, err
		}
		files[e.Name()] = volatile.ReplaceAll(src, nil)
	}
	z, err := zipFiles(files)
	if err != nil {
		return nil, err
	}
	files[base+"-fab.zip"] = z
	return files, nil
}

// zipFiles zips files in name order, every one dated 1 January 1980 (the
// zip format's first date), so the same files make the same zip.
func zipFiles(files map[string][]byte) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)})
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(files[name]); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// FabDir is the folder of a board's fabrication outputs, beside its board
// file.
const FabDir = "fab"

// Fab writes the fabrication outputs of every routed board under dir (the
// kicad/ folder, already generated), replacing what its fab/ folders held,
// and returns their paths relative to dir.
func Fab(cli, dir string) ([]string, error) {
	var paths []string
	for _, b := range Routed() {
		base := BaseOf(b)
		files, err := FabFiles(cli, filepath.Join(dir, base, base+".kicad_pcb"))
		if err != nil {
			return nil, err
		}
		out := filepath.Join(dir, base, FabDir)
		if err := os.RemoveAll(out); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(out, 0o755); err != nil {
			return nil, err
		}
		for _, name := range slices.Sorted(maps.Keys(files)) {
			if err := os.WriteFile(filepath.Join(out, name), files[name], 0o644); err != nil {
				return nil, err
			}
			paths = append(paths, filepath.Join(base, FabDir, name))
		}
	}
	return paths, nil
}
