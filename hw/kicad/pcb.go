package kicad

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/hw/kicad/route"
)

// pcbLayers are KiCad 6's standard layers for a two-layer board.
var pcbLayers = []string{
	`0 "F.Cu" signal`, `31 "B.Cu" signal`, `32 "B.Adhes" user "B.Adhesive"`, `33 "F.Adhes" user "F.Adhesive"`,
	`34 "B.Paste" user`, `35 "F.Paste" user`, `36 "B.SilkS" user "B.Silkscreen"`, `37 "F.SilkS" user "F.Silkscreen"`,
	`38 "B.Mask" user`, `39 "F.Mask" user`, `40 "Dwgs.User" user "User.Drawings"`, `41 "Cmts.User" user "User.Comments"`,
	`42 "Eco1.User" user "User.Eco1"`, `43 "Eco2.User" user "User.Eco2"`, `44 "Edge.Cuts" user`, `45 "Margin" user`,
	`46 "B.CrtYd" user "B.Courtyard"`, `47 "F.CrtYd" user "F.Courtyard"`, `48 "B.Fab" user`, `49 "F.Fab" user`,
}

// PCB renders the board as a KiCad board file (KiCad 6's format, which
// KiCad 9 reads): every footprint placed on a grid by functional group,
// every pad on its hw net and, for the sizes in RoutedSizes, every net
// routed by package route. Footprints link to their schematic symbols, so
// Pcbnew's Update PCB from Schematic keeps working. A routed board has
// its pours (pours), unfilled: Files has KiCad fill them.
func PCB(b *hw.Netlist, schematicFile string) ([]byte, error) {
	return pcb(b, schematicFile, nil)
}

// pcb is PCB with the pours' filled polygons by zone name.
func pcb(b *hw.Netlist, schematicFile string, fills map[string][]*Expr) ([]byte, error) {
	// A pin on no net takes the name its library symbol gives it.
	if _, err := installed(); err != nil {
		return nil, err
	}
	fps, err := installedFootprints()
	if err != nil {
		return nil, err
	}
	l := placeFootprints(b)
	var res *route.Result
	state := "placed by function, not routed."
	if routed(b) {
		var err error
		if res, err = routeLayout(b, l); err != nil {
			return nil, err
		}
		state = "placed by function, routed by package route."
	}
	paper := "A0"
	for _, p := range papers {
		if um(p.w)*10 >= l.right+boardAt && um(p.h)*10 >= l.bottom+boardAt {
			paper = p.name
			break
		}
	}
	key := b.Name + "/"
	w := &writer{}
	w.open("(kicad_pcb (version 20211014) (generator ttlpapers)")
	w.line("(general (thickness 1.6))")
	w.line("(paper %s)", quote(paper))
	w.line("(title_block (title %s) (rev %s) (company \"ttlpapers\") (comment 1 %s) (comment 2 %s))", quote(b.Name), quote(b.Revision),
		quote("Generated from the hw netlist by papersctl kicad: "+state), quote(Notice))
	w.open("(layers")
	for _, layer := range pcbLayers {
		w.line("(%s)", layer)
	}
	w.close()
	w.open("(setup")
	stackup(w)
	w.line("(pad_to_mask_clearance 0)")
	w.close()
	h := newHierarchy(b)
	code := writeNets(w, b, h, l)
	for _, f := range l.fps {
		writeFootprint(w, b, h, key, schematicFile, f, fps[f.c.Part.Footprint], code)
	}
	for i, h := range l.holes() {
		writeHole(w, key, schematicFile, fps[holeFootprint], i, h)
	}
	for _, t := range l.titles {
		w.line("(gr_text %s (at %v %v) (layer \"F.SilkS\") (effects (font (size 2 2) (thickness 0.3)) (justify left)) (tstamp %s))", quote(t.text), t.X, t.Y, uuid(key+"pcb/title/"+t.text))
	}
	w.line("(gr_rect (start %v %v) (end %v %v) (layer \"Edge.Cuts\") (width 0.1) (fill none) (tstamp %s))", l.left, l.top, l.right, l.bottom, uuid(key+"pcb/edge"))
	if res != nil {
		writeTracks(w, key, res, func(net string) int { return code[h.kicadName(net)] })
		writeZones(w, b, key, l, code, fills)
	}
	w.close()
	return []byte(w.b.String()), nil
}

// writeNets declares the nets, numbered in the netlist export's order
// (then the unconnected pins' nets, in footprint order), and returns each
// one's number by KiCad name.
func writeNets(w *writer, b *hw.Netlist, h *hierarchy, l *pcbLayout) map[string]int {
	nets := append([]*hw.Net(nil), b.Nets...)
	sort.Slice(nets, func(i, j int) bool { return h.netName(nets[i].Name) < h.netName(nets[j].Name) })
	code := map[string]int{}
	w.line("(net 0 \"\")")
	add := func(name string) {
		if _, ok := code[name]; !ok {
			code[name] = len(code) + 1
			w.line("(net %d %s)", code[name], quote(name))
		}
	}
	for _, n := range nets {
		add(h.netName(n.Name))
	}
	for _, f := range l.fps {
		for _, p := range f.fp.Pads {
			if name, _, ok := padNet(b, f.c, p); ok {
				add(h.kicadName(name))
			}
		}
	}
	return code
}

// writeFootprint writes one placed footprint, KiCad's library copy with
// each pad on its net and the builder's marks on the silkscreen.
func writeFootprint(w *writer, b *hw.Netlist, h *hierarchy, key, schematicFile string, f fpPlaced, lib *Expr, code map[string]int) {
	c := f.c
	u := key + c.Ref + "/fp"
	cx, cy := refAt(f)
	t := fpTexts{ref: c.Ref, value: c.Part.Name, refX: cx, refY: cy, rot: f.Rot, uuid: uuid(u),
		pad: func(num string) string {
			name, pin, ok := padNet(b, c, fpPad{Num: num})
			if !ok {
				return ""
			}
			name = h.kicadName(name)
			return fmt.Sprintf("(net %d %s) (pinfunction %s) (pintype %s)", code[name], quote(name), quote(pinName(c.Part, pin)), quote(kicadPinType(pin.Type)))
		}}
	writeLibFootprint(w, c.Part.Footprint, lib, f.X, f.Y, t, func() {
		// The schematic symbol's sheet and uuid.
		sheetName, path := "", "/"+uuid(key+c.Ref)
		if sh := h.sheetOf(c.Ref); sh != nil {
			schematicFile, sheetName, path = sh.file, sh.name, "/"+sh.uuid(key)+path
		}
		w.line("(property \"Sheetfile\" %s)", quote(schematicFile))
		w.line("(property \"Sheetname\" %s)", quote(sheetName))
		w.line("(path %s)", quote(path))
		for i, m := range marks(c) {
			w.line("(fp_text user %s (at %v %v%s) (layer \"F.SilkS\") (effects (font (size 1 1) (thickness 0.15))) (tstamp %s))", quote(m.text), m.X, m.Y, rot(f.Rot), uuid(fmt.Sprintf("%s/mark%d", u, i)))
		}
	})
}

// refAt is where a footprint's reference goes on the silkscreen, clear of
// its outline and pads (KiCad's DRC checks both): inside a chip's,
// capacitor's or resistor's outline, between its pins; beside an edge
// connector's "PE k" title, at the end away from it; on the board's side of
// an IDC header; under a PE's LED, between its "G" and "R"; above any other
// part.
func refAt(f fpPlaced) (x, y um) {
	fp := f.fp
	cx := (fp.X0 + fp.X1) / 2
	switch {
	case fp.Edge != 0 && f.Rot == 180:
		return fp.X0 + 3000, fp.Y0 - fpGap
	case fp.Edge != 0:
		return fp.X1 - 3000, fp.Y0 - fpGap
	case f.c.Part == hw.IDC26:
		return cx, fp.Y1 + textOut
	case f.c.Part == hw.LEDBicolour:
		return 2540, fp.Y1 + textOut
	case strings.HasPrefix(f.c.Part.Footprint, "Package_DIP:"), f.c.Part == hw.Cap100n, f.c.Part == hw.R220, f.c.Part == hw.R1k:
		return cx, (fp.Y0 + fp.Y1) / 2
	}
	return cx, fp.Y0 - textOut
}

// textOut is how far beyond a courtyard a 1 mm text's centre goes: it
// keeps within half the gap between two footprints.
const textOut um = 600

// marks are the silkscreen texts a builder solders by beyond KiCad's
// outlines, in footprint coordinates: which lead of a PE's LED is green
// and which red, and whose LED it is; which screw of the power input takes
// +5 V.
func marks(c *hw.Component) []groupTitle {
	switch c.Part {
	case hw.LEDBicolour:
		pe, _ := strconv.Atoi(strings.TrimPrefix(c.Ref, "D"))
		fp := footprintDefs[c.Part.Footprint]
		return []groupTitle{{fmt.Sprintf("PE %d", pe-1), 2540, fp.Y0 - textOut}, {"G", 0, fp.Y1 + textOut}, {"R", 5080, fp.Y1 + textOut}}
	case hw.PowerIn:
		return []groupTitle{{"+5V", 0, -3810}, {"GND", 5080, -3810}}
	}
	return nil
}

// writeHole writes mounting hole i, KiCad's library footprint (no BOM line,
// no position) linked to its symbol on the root sheet (mountingHoles), its
// reference on the board's side of the hole (holes 0 and 1 are the top
// corners).
func writeHole(w *writer, key, schematicFile string, lib *Expr, i int, at [2]um) {
	u := fmt.Sprintf("%spcb/hole%d", key, i)
	refY := um(4150)
	if i >= 2 {
		refY = -refY
	}
	ref := fmt.Sprintf("H%d", i+1)
	t := fpTexts{ref: ref, refY: refY, uuid: uuid(u), pad: func(string) string { return "" }}
	writeLibFootprint(w, holeFootprint, lib, at[0], at[1], t, func() {
		w.line("(property \"Sheetfile\" %s)", quote(schematicFile))
		w.line("(property \"Sheetname\" \"\")")
		w.line("(path %s)", quote("/"+uuid(key+ref)))
	})
}

// rot is the angle field of a footprint or pad position: KiCad gives pads
// the footprint's rotation too, and leaves 0 out.
func rot(deg int) string {
	if deg == 0 {
		return ""
	}
	return " " + strconv.Itoa(deg)
}

// ReadPCB parses a KiCad board file into nets by name (the sheet path
// removed, NetLabel; pads on no net or on the "unconnected-(…)" net of a
// pin left unconnected left out) and footprint library names by
// reference (the mounting holes, no part of the circuit, left
// out).
func ReadPCB(src []byte) (nets map[string][]Node, footprints map[string]string, err error) {
	root, err := ParseExpr(string(src))
	if err != nil {
		return nil, nil, err
	}
	if root.Head() != "kicad_pcb" {
		return nil, nil, fmt.Errorf("kicad: not a board file (starts with %q)", root.Head())
	}
	nets, footprints = map[string][]Node{}, map[string]string{}
	for _, fp := range root.Children("footprint") {
		if fp.Arg(0) == holeFootprint {
			continue // a mounting hole: no part of the circuit
		}
		ref := fpReference(fp)
		if _, dup := footprints[ref]; dup || ref == "" {
			return nil, nil, fmt.Errorf("kicad: footprint %s without a reference or placed twice", fp.Arg(0))
		}
		footprints[ref] = fp.Arg(0)
		for _, p := range fp.Children("pad") {
			if n := p.Child("net"); n != nil && n.Arg(1) != "" && !strings.HasPrefix(n.Arg(1), "unconnected-(") {
				name := NetLabel(n.Arg(1))
				nets[name] = append(nets[name], Node{ref, p.Arg(0)})
			}
		}
	}
	return nets, footprints, nil
}
