package kicad

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ttlpapers/ttlpapers/hw"
)

// A pour is one copper zone over the whole board: ground on the front,
// the supply on the back. Two whole-board pours carry the supply current
// of the 32-PE board within the DC limits with nothing rerouted (the DC
// check, TestSupplyCheck), so the boards stay two-layer.
type pour struct {
	name, net, layer string
}

// Zone settings, mm: the routing's clearance, and fill at least a power
// track's width. Pads join their pour solidly, not by thermal reliefs: in
// the dense DIP rows many reliefs' spokes reached only a sliver of fill
// cut off by tracks, which KiCad's DRC rejects as starved (2 pads on the
// 4-PE board, 6 on the 8-PE one), and a solid join has no spoke to starve.
const (
	zoneClearance    = "0.2"
	zoneMinThickness = "0.25"
)

// pours are a board's zones: GND on F.Cu and its supply (VCC, or the Pi
// adapter's 3.3 V) on B.Cu.
func pours(b *hw.Netlist) []pour {
	supply := hw.VCC
	if b.Name == hw.PiAdapterName {
		supply = hw.NetPi3V3
	}
	return []pour{
		{"GND front", netlistName(hw.GND), "F.Cu"},
		{supply + " back", netlistName(supply), "B.Cu"},
	}
}

// writeZones writes the pours over the board's outline, each with the
// filled polygons fills gives it by zone name (none: the zone is unfilled).
func writeZones(w *writer, b *hw.Netlist, key string, l *pcbLayout, code map[string]int, fills map[string][]*Expr) {
	for _, p := range pours(b) {
		w.open("(zone (net %d) (net_name %s) (layer %s) (tstamp %s) (name %s) (hatch edge 0.5)", code[p.net], quote(p.net), quote(p.layer), uuid(key+"pcb/zone/"+p.name), quote(p.name))
		w.line("(connect_pads yes (clearance %s))", zoneClearance)
		w.line("(min_thickness %s) (filled_areas_thickness no)", zoneMinThickness)
		w.line("(fill yes)")
		w.line("(polygon (pts (xy %v %v) (xy %v %v) (xy %v %v) (xy %v %v)))", l.left, l.top, l.right, l.top, l.right, l.bottom, l.left, l.bottom)
		for _, f := range fills[p.name] {
			writeFill(w, f)
		}
		w.close()
	}
}

// fillPointsPerLine is how many corners a line of a fill holds, as KiCad
// writes them: a fill has up to hundreds of thousands.
const fillPointsPerLine = 6

// writeFill writes one filled polygon as KiCad gave it, its numbers
// unchanged.
func writeFill(w *writer, f *Expr) {
	w.open("(filled_polygon (layer %s)", quote(f.Child("layer").Arg(0)))
	w.open("(pts")
	xys := f.Child("pts").Children("xy")
	for i := 0; i < len(xys); i += fillPointsPerLine {
		var s strings.Builder
		for j, xy := range xys[i:min(i+fillPointsPerLine, len(xys))] {
			if j > 0 {
				s.WriteByte(' ')
			}
			fmt.Fprintf(&s, "(xy %s %s)", xy.Arg(0), xy.Arg(1))
		}
		w.line("%s", s.String())
	}
	w.close()
	w.close()
}

// ErrNoZoneFiller is returned, wrapped with the reason, when KiCad's
// pcbnew Python module, which fills the pours, cannot be run.
var ErrNoZoneFiller = errors.New("kicad: KiCad 9's pcbnew Python module fills the boards' pours: on Debian bookworm apt-get install -t bookworm-backports kicad")

// pcbnewPython is the Python pcbnew is built for: Debian's, not another
// on PATH.
const pcbnewPython = "/usr/bin/python3"

// fillScript fills every zone of the board in argv[1] (its project beside
// it, so the design rules are the project's) and saves it as argv[2].
const fillScript = `
import sys, pcbnew
b = pcbnew.LoadBoard(sys.argv[1])
pcbnew.ZONE_FILLER(b).Fill(b.Zones())
pcbnew.SaveBoard(sys.argv[2], b)
`

// fillZones has KiCad's zone filler fill the board's pours, on a copy of
// the board beside its project files (pro, dru), and returns the filled
// polygons by zone name. KiCad's filler gives the same polygons for the
// same board every time, so the boards stay reproducible byte for byte.
func fillZones(base string, pcb, pro, dru []byte) (map[string][]*Expr, error) {
	if _, err := os.Stat(pcbnewPython); err != nil {
		return nil, fmt.Errorf("%w (%v)", ErrNoZoneFiller, err)
	}
	tmp, err := os.MkdirTemp("", "ttlpapers-fill-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	for ext, src := range map[string][]byte{".kicad_pcb": pcb, ".kicad_pro": pro, ".kicad_dru": dru} {
		if err := os.WriteFile(filepath.Join(tmp, base+ext), src, 0o644); err != nil {
			return nil, err
		}
	}
	in, out := filepath.Join(tmp, base+".kicad_pcb"), filepath.Join(tmp, "filled.kicad_pcb")
	cmd := exec.Command(pcbnewPython, "-c", fillScript, in, out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if bytes.Contains(stderr.Bytes(), []byte("No module named 'pcbnew'")) {
			return nil, fmt.Errorf("%w (%s cannot import pcbnew)", ErrNoZoneFiller, pcbnewPython)
		}
		return nil, fmt.Errorf("kicad: filling %s's zones with pcbnew: %v\n%s", base, err, stderr.Bytes())
	}
	src, err := os.ReadFile(out)
	if err != nil {
		return nil, err
	}
	root, err := ParseExpr(string(src))
	if err != nil {
		return nil, fmt.Errorf("kicad: reading %s as pcbnew filled it: %w", base, err)
	}
	fills := map[string][]*Expr{}
	for _, z := range root.Children("zone") {
		name := z.Child("name").Arg(0)
		for _, f := range z.Children("filled_polygon") {
			if f.Child("island") != nil {
				// The filler removes islands (its default): one kept would be copper on no supply.
				return nil, fmt.Errorf("kicad: %s's zone %q has an island of fill", base, name)
			}
			fills[name] = append(fills[name], f)
		}
	}
	return fills, nil
}

// unfill removes a board's filled polygons, as writeFill wrote them: what
// is left is the board as PCB makes it.
func unfill(pcb []byte) []byte {
	var out []byte
	skip := "" // the closing line of the fill being skipped
	for line := range bytes.Lines(pcb) {
		trimmed := bytes.TrimLeft(line, " ")
		switch {
		case skip != "":
			if string(line) == skip {
				skip = ""
			}
		case bytes.HasPrefix(trimmed, []byte("(filled_polygon ")):
			skip = strings.Repeat(" ", len(line)-len(trimmed)) + ")\n"
		default:
			out = append(out, line...)
		}
	}
	return out
}
