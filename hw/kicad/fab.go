package kicad

import (
	"archive/zip"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
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

// jobDate and jobVersion are the Gerber job file's creation date and
// KiCad's version in it, which the job file requires: the date fixed, as
// the zip's, and the version cut to KiCad's major.minor, so that the file
// too depends on the board alone.
var (
	jobDate    = regexp.MustCompile(`("CreationDate": )"[^"]*"`)
	jobVersion = regexp.MustCompile(`("Version": "\d+\.\d+)[^"]*"`)
)

// FabFiles makes the fabrication outputs of one board with kicad-cli (the
// path of KiCad 9's command-line tool): Gerbers of FabLayers with KiCad's
// Gerber job file, the Excellon drill file, the position file, the same
// placements as JLCPCB's CPL file, a fab note, and a zip of them with the
// BOMs (ours and JLCPCB's), as board houses take them. The board file's
// folder must hold its project (for the design rules) and its BOMs
// (base-bom.csv, base-bom-jlcpcb.csv). Names are relative to a fab/
// folder beside the board.
func FabFiles(cli, pcbPath string) (map[string][]byte, error) {
	base := strings.TrimSuffix(filepath.Base(pcbPath), ".kicad_pcb")
	files := map[string][]byte{}
	for _, name := range []string{base + "-bom.csv", base + jlcpcbBOMSuffix} {
		src, err := os.ReadFile(filepath.Join(filepath.Dir(pcbPath), name))
		if err != nil {
			return nil, fmt.Errorf("kicad: the fab outputs include the BOMs: %w (run `papersctl kicad` first)", err)
		}
		files[name] = src
	}
	pcb, err := os.ReadFile(pcbPath)
	if err != nil {
		return nil, err
	}
	if err := plotFab(cli, pcbPath, base, files); err != nil {
		return nil, err
	}
	cpl, err := jlcpcbCPL(files[base+"-pos.csv"], pcb)
	if err != nil {
		return nil, err
	}
	files[base+"-cpl-jlcpcb.csv"] = cpl
	note, err := fabNote(base, pcb, files[base+"-job.gbrjob"], slices.Sorted(maps.Keys(files)))
	if err != nil {
		return nil, err
	}
	files[base+"-fab-note.txt"] = note
	z, err := zipFiles(files)
	if err != nil {
		return nil, err
	}
	files[base+"-fab.zip"] = z
	return files, nil
}

// plotFab runs kicad-cli on the board for its Gerbers, drill and
// position files, into a folder of its own that it removes, and adds them
// to files, each stripped of what makes it differ from run to run.
func plotFab(cli, pcbPath, base string, files map[string][]byte) error {
	tmp, err := os.MkdirTemp("", "ttlpapers-fab-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	runs := [][]string{
		{"pcb", "export", "gerbers", "--layers", strings.Join(FabLayers, ","), "--subtract-soldermask", "-o", tmp + "/", pcbPath},
		{"pcb", "export", "drill", "--format", "excellon", "-o", tmp + "/", pcbPath},
		{"pcb", "export", "pos", "--format", "csv", "--units", "mm", "--side", "both", "-o", filepath.Join(tmp, base+"-pos.csv"), pcbPath},
	}
	for _, args := range runs {
		if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
			return fmt.Errorf("kicad: %s %s: %v\n%s", filepath.Base(cli), strings.Join(args[:3], " "), err, out)
		}
	}
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return err
	}
	for _, e := range entries {
		src, err := os.ReadFile(filepath.Join(tmp, e.Name()))
		if err != nil {
			return err
		}
		if strings.HasSuffix(e.Name(), ".gbrjob") {
			src = jobVersion.ReplaceAll(jobDate.ReplaceAll(src, []byte(`$1"1980-01-01T00:00:00+00:00"`)), []byte(`$1"`))
		} else {
			src = volatile.ReplaceAll(src, nil)
		}
		files[e.Name()] = src
	}
	return nil
}

// fabNote is the fab note of a board file, its size taken from KiCad's
// job file; files are the other outputs, which it lists.
func fabNote(base string, pcb, job []byte, files []string) ([]byte, error) {
	var j struct {
		GeneralSpecs struct{ Size struct{ X, Y float64 } }
	}
	if err := json.Unmarshal(job, &j); err != nil {
		return nil, fmt.Errorf("kicad: %s's Gerber job file: %w", base, err)
	}
	root, err := ParseExpr(string(pcb))
	if err != nil {
		return nil, err
	}
	title := base
	if tb := root.Child("title_block"); tb != nil {
		title = fmt.Sprintf("%s, revision %s (%s)", tb.Child("title").Arg(0), tb.Child("rev").Arg(0), base)
	}
	return FabNote(title, pcb, j.GeneralSpecs.Size.X, j.GeneralSpecs.Size.Y, append(files, base+"-fab-note.txt"))
}

// jlcpcbCPL turns KiCad's position file into JLCPCB's placement (CPL)
// file: Designator, Mid X, Mid Y, Layer, Rotation, in KiCad's coordinates
// (millimetres, Y up, as the position file has them), each part at the
// centre of its pads on the board pcb (PadCentres), not at its anchor.
func jlcpcbCPL(pos, pcb []byte) ([]byte, error) {
	rows, err := csv.NewReader(bytes.NewReader(pos)).ReadAll()
	if err != nil || len(rows) == 0 || !slices.Equal(rows[0], []string{"Ref", "Val", "Package", "PosX", "PosY", "Rot", "Side"}) {
		return nil, fmt.Errorf("kicad: KiCad's position file is not the CSV expected (Ref,Val,Package,PosX,PosY,Rot,Side): %v", err)
	}
	centres, err := PadCentres(pcb)
	if err != nil {
		return nil, err
	}
	mm := func(v float64) string { return strconv.FormatFloat(math.Round(v*1000)/1000+0, 'f', -1, 64) + "mm" }
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	cw.Write([]string{"Designator", "Mid X", "Mid Y", "Layer", "Rotation"})
	for _, r := range rows[1:] {
		c, ok := centres[r[0]]
		if !ok {
			return nil, fmt.Errorf("kicad: %s is in KiCad's position file but has no pads on the board", r[0])
		}
		rot, _ := strconv.ParseFloat(r[5], 64)
		layer := map[string]string{"top": "Top", "bottom": "Bottom"}[r[6]]
		cw.Write([]string{r[0], mm(c[0]), mm(-c[1]), layer, strconv.FormatFloat(rot, 'f', -1, 64)})
	}
	cw.Flush()
	return buf.Bytes(), nil
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
func Fab(cli, dir string, progress func(what string)) ([]string, error) {
	var paths []string
	for _, b := range Routed() {
		base := BaseOf(b)
		if progress != nil {
			progress("fabrication outputs of " + base + " (kicad-cli)")
		}
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
