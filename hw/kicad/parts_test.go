package kicad_test

import (
	"bytes"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/hw/kicad"
)

// leads is what a maker's datasheet gives of a part's leads: how many,
// the smallest distance between two (0: an axial part, whose leads the
// footprint bends to its own pitch), and the distance between its two
// rows (0: one row); body, if not empty, is the package size the
// footprint's name must carry.
type leads struct {
	pins          int
	pitch, across float64 // mm
	body          string
}

// datasheets are the maker part numbers' leads, from each maker's
// datasheet: a TI "N" package is a 300 mil plastic DIP; Würth's WR-BHD
// 61202621621 is a 2×13 box header and Samtec's TSW-120-07-G-D a 2×20
// header, both 2.54 mm; Vishay's K…TH5 ceramics have 5.0 mm leads;
// Panasonic's ECA-1EM100 (10 µF 25 V) is 5 mm across with 2.0 mm leads;
// Phoenix Contact's 1715721 (MKDS 1,5/2-5,08) has 5.08 mm pitch; Yageo's
// CFR-25 resistors are 1/4 W axial parts of DIN 0207 size; Everlight's
// 333-2SUBC/S400-A4 is a 5 mm round blue lamp on 2.54 mm leads; CONNFLY's
// DS1037 right-angle D-subs put the nearer row of pins 8.08 mm behind the
// flange's front face (LCSC's footprint of the 9-way; docs/board.md),
// within 0.02 mm of the footprint's 7.70 mm edge offset plus its 0.4 mm
// flange; Bourns's MF-RHT fuses have 5.1 mm lead spacing, which KiCad's
// footprints set with the second lead 1.2 mm across the disc (5.24 mm
// centre to centre), and the footprint must be the model's own (the disc
// grows with the hold current); onsemi's MBR1045G is a two-lead TO-220AC,
// leads 5.08 mm apart.
var datasheets = map[string]leads{
	"MF-RHT100-0":          {2, 5.24, 1.2, "MF-RHT100"},
	"MF-RHT200-0":          {2, 5.24, 1.2, "MF-RHT200"},
	"MF-RHT500-0":          {2, 5.24, 1.2, "MF-RHT500"},
	"MBR1045G":             {2, 5.08, 0, "TO-220"},
	"SN74LS20N":            {14, 2.54, 7.62, ""},
	"SN74LS30N":            {14, 2.54, 7.62, ""},
	"SN74LS32N":            {14, 2.54, 7.62, ""},
	"SN74LS40N":            {14, 2.54, 7.62, ""},
	"SN74LS74AN":           {14, 2.54, 7.62, ""},
	"SN74LS125AN":          {14, 2.54, 7.62, ""},
	"SN74LS126AN":          {14, 2.54, 7.62, ""},
	"SN74LS244N":           {20, 2.54, 7.62, ""},
	"SN74LVC245AN":         {20, 2.54, 7.62, ""},
	"61202621621":          {26, 2.54, 2.54, ""},
	"TSW-120-07-G-D":       {40, 2.54, 2.54, ""},
	"K104K15X7RF5TH5":      {2, 5.0, 0, ""},
	"ECA-1EM100":           {2, 2.0, 0, "D5.0mm"},
	"1715721":              {2, 5.08, 0, ""},
	"CFR-25JB-52-220R":     {2, 0, 0, "DIN0207"},
	"CFR-25JB-52-1K":       {2, 0, 0, "DIN0207"},
	"333-2SUBC/S400-A4":    {2, 2.54, 0, "D5.0mm"},
	"DS1037-25MNAKT74-0CC": {25, 2.77, 2.84, "EdgePinOffset7.70mm"},
	"DS1037-25FNAKT74-0CC": {25, 2.77, 2.84, "EdgePinOffset7.70mm"},
}

// mountingHoles are a connector's mounting holes' distance apart, in mm,
// where it has two: a D-sub's shell B (25 ways) puts them 47.04 mm apart
// (1.852 in), which KiCad's footprints round to 47.1.
var mountingHoles = map[string]float64{
	"DS1037-25MNAKT74-0CC": 47.04,
	"DS1037-25FNAKT74-0CC": 47.04,
}

// unnamed are the parts still without a maker part number, to be chosen
// and checked: the bi-colour LED must match the silkscreen's lead order.
var unnamed = []*hw.Part{hw.LEDBicolour}

// TestPartNumbersMatchFootprints checks every maker part number against
// KiCad's library footprint the part is placed with: the datasheet's lead
// count, pitch and row spacing against the footprint's pads, and its body
// size against the footprint's name. A part without a number must be
// listed as still to be chosen, and an LCSC number must look like one.
func TestPartNumbersMatchFootprints(t *testing.T) {
	needLibraries(t)
	fps, err := kicad.ReadFootprints(kicad.FootprintDir(), kicad.BoardFootprints())
	if err != nil {
		t.Fatal(err)
	}
	lcsc := regexp.MustCompile(`^C[0-9]+$`)
	for _, p := range append(slices.Clone(hw.Parts), hw.Passives...) {
		if p.LCSC != "" && (p.MPN == "" || !lcsc.MatchString(p.LCSC)) {
			t.Errorf("%s: LCSC number %q without a maker part number, or not C and digits", p.Name, p.LCSC)
		}
		if p.MPN == "" {
			if !slices.Contains(unnamed, p) {
				t.Errorf("%s: no maker part number, and not listed as still to be chosen", p.Name)
			}
			continue
		}
		if slices.Contains(unnamed, p) {
			t.Errorf("%s: has part number %s but is listed as still to be chosen", p.Name, p.MPN)
		}
		want, ok := datasheets[p.MPN]
		if !ok {
			t.Errorf("%s: part number %s has no datasheet entry to check against its footprint", p.Name, p.MPN)
			continue
		}
		pins, pitch, across, holes := padGeometry(t, fps[p.Footprint])
		if pins != want.pins || (want.pitch != 0 && math.Abs(pitch-want.pitch) > 0.01) || math.Abs(across-want.across) > 0.01 {
			t.Errorf("%s (%s): footprint %s has %d pads, pitch %.2f mm, rows %.2f mm apart; the datasheet %d leads, pitch %.2f, rows %.2f",
				p.Name, p.MPN, p.Footprint, pins, pitch, across, want.pins, want.pitch, want.across)
		}
		if !strings.Contains(p.Footprint, want.body) {
			t.Errorf("%s (%s): footprint %s is not of the body size %s", p.Name, p.MPN, p.Footprint, want.body)
		}
		if w := mountingHoles[p.MPN]; math.Abs(holes-w) > 0.1 {
			t.Errorf("%s (%s): footprint %s has mounting holes %.2f mm apart, the part %.2f mm", p.Name, p.MPN, p.Footprint, holes, w)
		}
	}
}

// padGeometry measures a library footprint's numbered pads: how many, the
// smallest distance between two, and the narrower of the pads' extents
// across X and Y (a DIP's row spacing; 0 for a single row); and the
// distance between its two mounting holes (0 unless it has two).
func padGeometry(t *testing.T, fp *kicad.Expr) (pins int, pitch, across, holes float64) {
	t.Helper()
	var xs, ys []float64
	var mounts [][2]float64
	for _, p := range fp.Children("pad") {
		at := p.Child("at")
		x, err1 := strconv.ParseFloat(at.Arg(0), 64)
		y, err2 := strconv.ParseFloat(at.Arg(1), 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("pad %s: bad position", p.Arg(0))
		}
		if n := p.Arg(0); n == "" || n == "0" {
			mounts = append(mounts, [2]float64{x, y})
			continue
		}
		xs, ys = append(xs, x), append(ys, y)
	}
	if len(mounts) == 2 {
		holes = math.Hypot(mounts[0][0]-mounts[1][0], mounts[0][1]-mounts[1][1])
	}
	pitch = math.Inf(1)
	for i := range xs {
		for j := range i {
			pitch = min(pitch, math.Hypot(xs[i]-xs[j], ys[i]-ys[j]))
		}
	}
	spread := func(v []float64) float64 { return slices.Max(v) - slices.Min(v) }
	return len(xs), pitch, min(spread(xs), spread(ys)), holes
}

// TestJLCPCBBOMCarriesLCSC: the JLCPCB BOM's part number column is each
// part's LCSC number, empty where none is confirmed.
func TestJLCPCBBOMCarriesLCSC(t *testing.T) {
	byName := map[string]*hw.Part{}
	for _, p := range append(slices.Clone(hw.Parts), hw.Passives...) {
		byName[p.Name] = p
	}
	found := 0
	for _, n := range []int{4, 16} {
		rows, err := csv.NewReader(bytes.NewReader(kicad.JLCPCBBOM(hw.MustNew(n)))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows[1:] {
			p := byName[r[0]]
			if p == nil || r[3] != p.LCSC {
				t.Errorf("%d PEs: row %q: part number %q, want the part's LCSC number", n, r, r[3])
			}
			if r[3] != "" {
				found++
			}
		}
	}
	if found == 0 {
		t.Error("no LCSC number in any JLCPCB BOM")
	}
}

// TestPartNumbersTableCarriesLCSC: docs/board.md's "Part numbers" table
// gives every LCSC number the BOM carries on the row of its maker part
// number, and its LCSC column names no number the BOM lacks, so the table
// a buyer reads and the files a house reads agree.
func TestPartNumbersTableCarriesLCSC(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "board.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "\n### Part numbers\n")
	if !ok {
		t.Fatal(`docs/board.md has no "### Part numbers" section`)
	}
	table, _, _ = strings.Cut(table, "\n## ")
	var rows [][]string // cells of each table row
	for line := range strings.SplitSeq(table, "\n") {
		if strings.HasPrefix(line, "|") && !strings.HasPrefix(line, "|---") {
			rows = append(rows, strings.Split(strings.Trim(line, "|"), "|"))
		}
	}
	lcscNumber := regexp.MustCompile(`\bC[0-9]+\b`)
	bom := map[string]*hw.Part{}
	for _, p := range append(slices.Clone(hw.Parts), hw.Passives...) {
		if p.LCSC == "" {
			continue
		}
		bom[p.LCSC] = p
		found := false
		for _, r := range rows {
			found = found || strings.Contains(r[1], p.MPN) && strings.Contains(r[len(r)-1], p.LCSC)
		}
		if !found {
			t.Errorf("%s: no row of docs/board.md's part numbers table gives %s with LCSC %s", p.Name, p.MPN, p.LCSC)
		}
	}
	for _, r := range rows {
		for _, c := range lcscNumber.FindAllString(r[len(r)-1], -1) {
			if bom[c] == nil {
				t.Errorf("docs/board.md's part numbers table gives LCSC %s (row %q), which no part carries", c, r[0])
			}
		}
	}
}
