// Package kicad generates the TTL_PAPERS board's KiCad design files from
// the hw netlist — schematic (KiCad 9's format), project with design
// rules, board (KiCad 6's format, which KiCad 9 reads; routed by package
// route, every size and the Raspberry Pi adapter), netlist export, bills
// of materials and wire-wrap list — and, with KiCad 9's kicad-cli, the
// routed boards' fabrication outputs; and it reads schematics, netlists
// and boards (their copper too) back, so tests can prove that what a
// builder solders is exactly what the emulator simulates.
//
// Nothing is drawn by hand: the schematic embeds KiCad's own library
// symbols, read unchanged from the installed libraries (SymbolDir), and
// places their units, footprints name KiCad's standard libraries and link
// their 3-D models, and every pin is labelled with its hw net name. Output is
// deterministic: UUIDs are derived from names, nothing carries a date.
package kicad

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/ttlpapers/ttlpapers/hw"
)

// Base is the file name stem of a board's files: "ttl_papers_4pe".
func Base(pes int) string { return fmt.Sprintf("ttl_papers_%dpe", pes) }

// Files generates one board's files, keyed by path relative to the kicad/
// folder ("ttl_papers_4pe/ttl_papers_4pe.kicad_sch", ...), a routed
// board's pours filled by KiCad's zone filler (ErrNoZoneFiller without it).
func Files(b *hw.Netlist) (map[string][]byte, error) { return files(b, true) }

// files is Files, the pours filled only if fill.
func files(b *hw.Netlist, fill bool) (map[string][]byte, error) {
	base := BaseOf(b)
	p := func(ext string) string { return filepath.Join(base, base+ext) }
	board, err := PCB(b, base+".kicad_sch")
	if err != nil {
		return nil, err
	}
	sch, err := Schematics(b)
	if err != nil {
		return nil, err
	}
	pro, err := Project(b, base)
	if err != nil {
		return nil, err
	}
	dru := DesignRules(b)
	if fill && routed(b) {
		fills, err := fillZones(base, board, pro, dru)
		if err != nil {
			return nil, err
		}
		if board, err = pcb(b, base+".kicad_sch", fills); err != nil {
			return nil, err
		}
	}
	files := map[string][]byte{
		p(".kicad_pro"):                     pro,
		p(".kicad_pcb"):                     board,
		p(".net"):                           Netlist(b, base+".kicad_sch"),
		p("-bom.csv"):                       BOM(b),
		p(jlcpcbBOMSuffix):                  JLCPCBBOM(b),
		p("-wires.csv"):                     Wires(b),
		filepath.Join(base, "fp-lib-table"): FootprintTable(),
		p(".kicad_dru"):                     dru,
	}
	for name, src := range sch {
		files[filepath.Join(base, name)] = src
	}
	return files, nil
}

// AllFiles generates the files of every board size, plus a README and
// the board files' licence.
func AllFiles() (map[string][]byte, error) { return allFiles(nil, true) }

// allFiles is AllFiles, the pours filled only if fill, telling progress
// (when not nil) each board as its generation starts: routing one takes
// up to minutes, filling its pours as long.
func allFiles(progress func(what string), fill bool) (map[string][]byte, error) {
	all := map[string][]byte{"README.md": []byte(readme), "LICENSE": licenceText, CableFile: CableSVG()}
	boards := []*hw.Netlist{}
	for _, n := range hw.Sizes {
		boards = append(boards, hw.MustNew(n))
	}
	pi, err := hw.PiAdapter()
	if err != nil {
		return nil, err
	}
	for _, b := range append(boards, pi) {
		if progress != nil {
			progress("generating, routing and filling the pours of " + BaseOf(b))
		}
		f, err := files(b, fill)
		if err != nil {
			return nil, err
		}
		maps.Copy(all, f)
	}
	return all, nil
}

const readme = `# TTL_PAPERS board design files (generated)

Everything here is generated from the hw netlist by

    go run ./cmd/papersctl kicad --fab

(without --fab, everything but the fab/ folders, and no kicad-cli
needed; KiCad 9's pcbnew Python module fills the pours either way).
Do not edit these files: change package hw and regenerate (a test fails
when they are stale). How to build a board: docs/board.md.

One folder per board size (4, 8, 16 and 32 PEs), each with a KiCad
project and schematic (KiCad's own library symbols), a board (.kicad_pcb:
the cable connectors on its edges, DB-25s for 4 and 8 PEs and IDC-26
headers for 16 and 32, every other footprint placed by function, every
pad on its net, a silkscreen to solder by, routed, a GND pour on the
front and a supply pour (VCC, the Pi adapter's 3.3 V) on the back,
filled by KiCad's zone filler), the netlist export
(.net), the bill of materials (-bom.csv, and -bom-jlcpcb.csv in JLCPCB's
columns) and a point-to-point wiring list for wire-wrap or perfboard
(-wires.csv); ttl_papers_pi is the Raspberry Pi adapter. cable/ draws
the IDC-26 to DB-25 cable of the 16- and 32-PE boards. The routed
boards' fab/ folders hold what a board house takes, made by KiCad 9:
Gerbers and their job file, drill and position files, JLCPCB's placement
file (-cpl-jlcpcb.csv), a fab note and a zip of them all.

These board files are under the CERN Open Hardware Licence Version 2 -
Permissive (CERN-OHL-P-2.0), in LICENSE here; the code that generates
them is under the repository's BSD 3-Clause licence.
`

// Generate writes every board size's files under dir and returns their
// paths, sorted. progress, when not nil, hears each board as it starts.
func Generate(dir string, progress func(what string)) ([]string, error) {
	files, err := allFiles(progress, true)
	if err != nil {
		return nil, err
	}
	paths := slices.Sorted(maps.Keys(files))
	for _, p := range paths {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(full, files[p], 0o644); err != nil {
			return nil, err
		}
	}
	sort.Strings(paths)
	return paths, nil
}
