package kicad

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/hw/kicad/route"
)

// um is a length on the board in micrometres: KiCad's footprints put pads
// on 0.001 mm positions (the DB-25's second row is offset by 1.385 mm).
type um int

func (u um) String() string { return strconv.FormatFloat(float64(u)/1000, 'f', -1, 64) }

// fpPad is one pad of a footprint, relative to the footprint's origin
// (pad 1, as in KiCad's libraries).
type fpPad struct {
	Num         string // "0": a mounting hole, on no net
	X, Y        um
	Shape       string // rect, roundrect or circle
	Size, Drill um
	// RRatio is a roundrect's corner radius over its size, as the library
	// gives it.
	RRatio string
}

// footprintDef is the geometry of one library footprint: its pads and its
// courtyard (the room it needs on the board).
type footprintDef struct {
	Pads           []fpPad
	X0, Y0, X1, Y1 um // courtyard, relative to the origin
	// Edge, for a connector that mounts on the board's edge, is where that
	// edge runs (Y, relative to the origin); the housing overhangs it.
	Edge um
}

// footprintDefs are the pads of the KiCad library footprints the hw parts
// name, copied by hand from KiCad 9's libraries so the generator needs no
// KiCad install; TestFootprintPadsMatchKiCadLibrary checks them against
// the library when it is installed.
var footprintDefs = map[string]*footprintDef{
	"Package_DIP:DIP-14_W7.62mm": dip(14, 16760),
	"Package_DIP:DIP-20_W7.62mm": dip(20, 24380),
	"Connector_Dsub:DSUB-25_Pins_Horizontal_P2.77x2.84mm_EdgePinOffset7.70mm_Housed_MountingHolesOffset9.12mm": {
		Pads: append(append(
			[]fpPad{{"0", -6930, 1420, "circle", 4000, 3200, ""}, {"0", 40170, 1420, "circle", 4000, 3200, ""}}, // mounting holes
			padRow{1, 13, 0, 0, 2770, 1600, 1000, "rect", "circle", ""}.pads()...),
			padRow{14, 12, 1385, 2840, 2770, 1600, 1000, "circle", "circle", ""}.pads()...),
		X0: -10430, Y0: -2310, X1: 43670, Y1: 17440,
		Edge: 7700, // the name's EdgePinOffset7.70mm
	},
	"Connector_Dsub:DSUB-25_Socket_Horizontal_P2.77x2.84mm_EdgePinOffset7.70mm_Housed_MountingHolesOffset9.12mm": {
		Pads: append(append(
			[]fpPad{{"0", -40170, 1420, "circle", 4000, 3200, ""}, {"0", 6930, 1420, "circle", 4000, 3200, ""}}, // mounting holes
			padRow{1, 13, 0, 0, -2770, 1600, 1000, "rect", "circle", ""}.pads()...),
			padRow{14, 12, -1385, 2840, -2770, 1600, 1000, "circle", "circle", ""}.pads()...),
		X0: -43670, Y0: -2310, X1: 10430, Y1: 17610,
		Edge: 7700,
	},
	"Connector_PinHeader_2.54mm:PinHeader_2x20_P2.54mm_Vertical": {
		Pads: func() []fpPad {
			var pads []fpPad
			for i := range 40 {
				shape := "circle"
				if i == 0 {
					shape = "rect"
				}
				pads = append(pads, fpPad{strconv.Itoa(i + 1), um(i%2) * 2540, um(i/2) * 2540, shape, 1700, 1000, ""})
			}
			return pads
		}(),
		X0: -1770, Y0: -1780, X1: 4320, Y1: 50030,
	},
	"LED_THT:LED_D5.0mm-3":                       {padRow{1, 3, 0, 0, 2540, 1800, 900, "rect", "circle", ""}.pads(), -1150, -3210, 6230, 3210, 0},
	"LED_THT:LED_D5.0mm":                         {padRow{1, 2, 0, 0, 2540, 1800, 900, "rect", "circle", ""}.pads(), -1950, -3210, 4490, 3210, 0},
	"Capacitor_THT:C_Disc_D5.0mm_W2.5mm_P5.00mm": {padRow{1, 2, 0, 0, 5000, 1600, 800, "circle", "circle", ""}.pads(), -1050, -1500, 6050, 1500, 0},
	"Capacitor_THT:CP_Radial_D5.0mm_P2.00mm":     {padRow{1, 2, 0, 0, 2000, 1600, 800, "roundrect", "circle", "0.15625"}.pads(), -1750, -2750, 3750, 2750, 0},
	"TerminalBlock_Phoenix:TerminalBlock_Phoenix_MKDS-1,5-2-5.08_1x02_P5.08mm_Horizontal": {
		padRow{1, 2, 0, 0, 5080, 2600, 1300, "roundrect", "circle", "0.096154"}.pads(), -3040, -5710, 8130, 5100, 0},
	"Resistor_THT:R_Axial_DIN0207_L6.3mm_D2.5mm_P10.16mm_Horizontal": {
		padRow{1, 2, 0, 0, 10160, 1600, 800, "circle", "circle", ""}.pads(), -1050, -1500, 11210, 1500, 0},
}

// dip is a dual in-line package, 0.3" wide: pins down the left side, back
// up the right; bottom is the courtyard's lower edge.
func dip(pins int, bottom um) *footprintDef {
	d := &footprintDef{X0: -1060, Y0: -1520, X1: 8670, Y1: bottom}
	for i := range pins {
		x, y := um(0), um(i)*2540
		if i >= pins/2 {
			x, y = 7620, um(pins-1-i)*2540
		}
		shape, ratio := "circle", ""
		if i == 0 {
			shape, ratio = "roundrect", "0.15625"
		}
		d.Pads = append(d.Pads, fpPad{strconv.Itoa(i + 1), x, y, shape, 1600, 800, ratio})
	}
	return d
}

// padRow is a row of n pads numbered from first, pitch apart along X from
// (x0, y); the first pad has its own shape (the pin-1 mark).
type padRow struct {
	first, n                  int
	x0, y, pitch, size, drill um
	firstShape, shape         string
	firstRRatio               string
}

func (r padRow) pads() []fpPad {
	var out []fpPad
	for i := range r.n {
		s, ratio := r.shape, ""
		if i == 0 {
			s, ratio = r.firstShape, r.firstRRatio
		}
		out = append(out, fpPad{strconv.Itoa(r.first + i), r.x0 + um(i)*r.pitch, r.y, s, r.size, r.drill, ratio})
	}
	return out
}

// Board layout: each functional group a title over rows of footprints, the
// board no wider than four DB-25 connectors.
const (
	boardW   um = 230000
	fpGap    um = 2540
	titleH   um = 5080
	boardAt  um = 20000 // the board's top left corner on the page
	edgeSpan um = 5000  // board edge beyond the outermost courtyard
)

// fpPlaced is a component's footprint with its origin on the page, turned
// by Rot degrees (0 or 180).
type fpPlaced struct {
	c    *hw.Component
	fp   *footprintDef
	X, Y um
	Rot  int
}

type groupTitle struct {
	text string
	X, Y um
}

// fpBlock is one functional group's footprints in rows under its title,
// relative to the block's top left corner.
type fpBlock struct {
	title groupTitle
	fps   []fpPlaced
	w, h  um
}

// layoutGroup lays out one group's footprints in rows channel apart (more
// than fpGap), each chip with its decoupling capacitor (caps) just above
// it.
func layoutGroup(b *hw.Board, group, title string, width, channel um, caps map[*hw.Component]*hw.Component) *fpBlock {
	blk := &fpBlock{title: groupTitle{title, 0, titleH / 2}}
	x, y, rowH := um(0), titleH, um(0)
	for _, c := range b.Components {
		if c.Group != group || c.Decouples != nil {
			continue
		}
		fp := footprintOf(c)
		w, h := fp.X1-fp.X0, fp.Y1-fp.Y0
		var capFp *footprintDef
		capH := um(0)
		if dc := caps[c]; dc != nil {
			capFp = footprintOf(dc)
			capH = capFp.Y1 - capFp.Y0 + capGap
			w, h = max(w, capFp.X1-capFp.X0), h+capH
		}
		if x > 0 && x+w > width {
			x, y, rowH = 0, y+rowH+fpGap+channel, 0
		}
		if capFp != nil {
			blk.fps = append(blk.fps, fpPlaced{caps[c], capFp, x - capFp.X0, y - capFp.Y0, 0})
		}
		blk.fps = append(blk.fps, fpPlaced{c, fp, x - fp.X0, y + capH - fp.Y0, 0})
		blk.w = max(blk.w, x+w)
		x += w + fpGap
		rowH = max(rowH, h)
	}
	if len(blk.fps) == 0 {
		return nil
	}
	blk.w = max(blk.w, um(len(title))*1800) // 2 mm title text
	blk.h = y + rowH
	return blk
}

// edgeGroup is the group whose footprints go on the board's edges.
const edgeGroup = "cable"

// capGap separates a decoupling capacitor's courtyard from its chip's.
const capGap um = 1270 // 500 µm still after snapping to the grid

func footprintOf(c *hw.Component) *footprintDef {
	fp := footprintDefs[c.Part.Footprint]
	if fp == nil {
		panic(fmt.Sprintf("kicad: no pads known for footprint %s of %s: add it to footprintDefs", c.Part.Footprint, c.Ref))
	}
	return fp
}

// pcbLayout is where every footprint goes, and the board's outline.
type pcbLayout struct {
	fps                      []fpPlaced
	titles                   []groupTitle
	left, top, right, bottom um
	// channel is the room added between rows of parts, and between them
	// and the connectors, for the tracks that run along the board.
	channel um
}

// channelFor is the routing room a board's rows get beyond their usual
// gaps: none up to 8 PEs; half a DIP pitch (two more tracks a layer) per
// PE beyond, since every PE adds a dozen nets that run the board's length
// (the 16-PE board, with none, kept 62 grid points shared after 60
// passes of rip-up and reroute; with 10 mm it routes in 16).
func channelFor(b *hw.Board) um { return um(max(b.PEs-8, 0)) * fpGap / 2 }

// connectorRow is how the cable connectors sit along an edge.
type connectorRow struct {
	fp      *footprintDef
	perEdge int // how many fit along the bottom edge (the rest go on top)
	pitch   um
}

// placeFootprints puts the cable connectors on the board's edges, mating
// side out, and every other component on a grid by functional group (the
// groups flowing left to right in rows, like the schematic's areas)
// between them. The connectors fill the bottom edge first; on boards with
// more than fit there, half go on the top edge, turned round, and the board
// widens to hold them.
func placeFootprints(b *hw.Board) *pcbLayout {
	conns, caps := edgeAndCaps(b)
	var row connectorRow
	if len(conns) > 0 {
		row.fp = footprintOf(conns[0])
		row.pitch = row.fp.X1 - row.fp.X0 + fpGap
		row.perEdge = max(min(int(boardW/row.pitch), len(conns)), (len(conns)+1)/2)
	}
	width := max(boardW, um(row.perEdge)*row.pitch-fpGap)
	if row.perEdge < int(boardW/row.pitch) {
		width = um(row.perEdge)*row.pitch - fpGap // fewer cables than an edge holds: as wide as they are
	}
	l := &pcbLayout{left: boardAt, top: boardAt, channel: channelFor(b)}
	split := min(row.perEdge, len(conns))
	gridTop := l.topConnectors(conns[split:], row)
	gridBottom := l.groups(b, caps, width, gridTop)
	l.bottom = gridBottom + edgeSpan
	l.bottomConnectors(conns[:split], row, gridBottom)
	if len(conns) > 0 {
		l.right = max(l.right, l.left+edgeSpan+um(row.perEdge)*row.pitch-fpGap)
	}
	l.right += edgeSpan
	l.snap()
	return l
}

// snap moves every footprint but the edge connectors onto the router's
// grid, counted from the board's corner, so the pads on a 2.54 mm pitch
// land on grid points.
func (l *pcbLayout) snap() {
	g := um(Rules.Grid)
	on := func(v, from um) um { return from + (v-from+g/2)/g*g }
	for i, f := range l.fps {
		if f.c.Group != edgeGroup {
			l.fps[i].X, l.fps[i].Y = on(f.X, l.left), on(f.Y, l.top)
		}
	}
}

// edgeAndCaps returns the cable connectors (PE k's is conns[k]) and each
// chip's decoupling capacitor.
func edgeAndCaps(b *hw.Board) (conns []*hw.Component, caps map[*hw.Component]*hw.Component) {
	caps = map[*hw.Component]*hw.Component{}
	for _, c := range b.Components {
		if c.Decouples != nil {
			caps[c.Decouples] = c
		}
		if c.Group == edgeGroup {
			if c.Ref != hw.ConnectorRef(len(conns)) {
				panic(fmt.Sprintf("kicad: cable connector %s out of PE order", c.Ref))
			}
			conns = append(conns, c)
		}
	}
	return conns, caps
}

// topConnectors places the connectors after the first perEdge on the top
// edge, turned 180° (their courtyard is then -X1..-X0, -Y1..-Y0 about the
// origin), and returns where the grid can start below them.
func (l *pcbLayout) topConnectors(conns []*hw.Component, row connectorRow) (gridTop um) {
	gridTop = l.top + edgeSpan
	first := row.perEdge // the PE of conns[0]
	for i, c := range conns {
		x := l.left + edgeSpan + um(i)*row.pitch
		l.fps = append(l.fps, fpPlaced{c, row.fp, x + row.fp.X1, l.top + row.fp.Edge, 180})
		l.titles = append(l.titles, groupTitle{fmt.Sprintf("PE %d", first+i), x, l.top + row.fp.Edge - row.fp.Y0 + fpGap})
		gridTop = l.top + row.fp.Edge - row.fp.Y0 + 2*fpGap + l.channel
	}
	return gridTop
}

// groups lays the functional groups out in rows of the given width from
// gridTop, and returns the bottom of the last row.
func (l *pcbLayout) groups(b *hw.Board, caps map[*hw.Component]*hw.Component, width, gridTop um) (gridBottom um) {
	x, y, rowH := um(0), um(0), um(0)
	for _, ar := range areas {
		if ar.group == edgeGroup {
			continue
		}
		blk := layoutGroup(b, ar.group, ar.title, width, l.channel, caps)
		if blk == nil {
			continue
		}
		if x > 0 && x+blk.w > width {
			x, y, rowH = 0, y+rowH+2*fpGap+l.channel, 0
		}
		ox, oy := l.left+edgeSpan+x, gridTop+y
		l.titles = append(l.titles, groupTitle{blk.title.text, ox + blk.title.X, oy + blk.title.Y})
		for _, f := range blk.fps {
			f.X, f.Y = f.X+ox, f.Y+oy
			l.fps = append(l.fps, f)
		}
		l.right = max(l.right, ox+blk.w)
		x += blk.w + 3*fpGap
		rowH = max(rowH, blk.h)
	}
	return gridTop + y + rowH
}

// bottomConnectors places the first perEdge connectors on the bottom edge,
// below the grid, and moves the outline's bottom to their edge.
func (l *pcbLayout) bottomConnectors(conns []*hw.Component, row connectorRow, gridBottom um) {
	for i, c := range conns {
		x, oy := l.left+edgeSpan+um(i)*row.pitch, gridBottom+2*fpGap+l.channel-row.fp.Y0
		l.fps = append(l.fps, fpPlaced{c, row.fp, x - row.fp.X0, oy, 0})
		title := fmt.Sprintf("PE %d", i)
		if len(conns) == 1 && c.Part == hw.DB25Socket {
			title = "Printer cable to the board" // the Pi adapter's port
		}
		l.titles = append(l.titles, groupTitle{title, x, oy + row.fp.Y0 - fpGap})
		l.bottom = oy + row.fp.Edge
	}
}

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
// Pcbnew's Update PCB from Schematic keeps working.
func PCB(b *hw.Board, schematicFile string) ([]byte, error) {
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
	code := writeNets(w, b, l)
	for _, f := range l.fps {
		writeFootprint(w, b, key, schematicFile, f, code)
	}
	for _, t := range l.titles {
		w.line("(gr_text %s (at %v %v) (layer \"F.SilkS\") (effects (font (size 2 2) (thickness 0.3)) (justify left)) (tstamp %s))", quote(t.text), t.X, t.Y, uuid(key+"pcb/title/"+t.text))
	}
	w.line("(gr_rect (start %v %v) (end %v %v) (layer \"Edge.Cuts\") (width 0.1) (fill none) (tstamp %s))", l.left, l.top, l.right, l.bottom, uuid(key+"pcb/edge"))
	if res != nil {
		writeTracks(w, key, res, code)
	}
	w.close()
	return []byte(w.b.String()), nil
}

// writeNets declares the nets, numbered in the netlist export's order
// (then the unconnected pins' nets, in footprint order), and returns each
// one's number by KiCad name.
func writeNets(w *writer, b *hw.Board, l *pcbLayout) map[string]int {
	nets := append([]*hw.Net(nil), b.Nets...)
	sort.Slice(nets, func(i, j int) bool { return netlistName(nets[i].Name) < netlistName(nets[j].Name) })
	code := map[string]int{}
	w.line("(net 0 \"\")")
	add := func(name string) {
		if _, ok := code[name]; !ok {
			code[name] = len(code) + 1
			w.line("(net %d %s)", code[name], quote(name))
		}
	}
	for _, n := range nets {
		add(netlistName(n.Name))
	}
	for _, f := range l.fps {
		for _, p := range f.fp.Pads {
			if name, _, ok := padNet(b, f.c, p); ok {
				add(name)
			}
		}
	}
	return code
}

// writeFootprint writes one placed footprint, each pad on its net.
func writeFootprint(w *writer, b *hw.Board, key, schematicFile string, f fpPlaced, code map[string]int) {
	c := f.c
	u := key + c.Ref + "/fp"
	w.open("(footprint %s (layer \"F.Cu\")", quote(c.Part.Footprint))
	w.line("(tstamp %s)", uuid(u))
	w.line("(at %v %v%s)", f.X, f.Y, rot(f.Rot))
	w.line("(descr %s)", quote(c.Part.Description))
	w.line("(property \"Sheetfile\" %s)", quote(schematicFile))
	w.line("(property \"Sheetname\" \"\")")
	w.line("(path \"/%s\")", uuid(key+c.Ref)) // the schematic symbol's uuid
	w.line("(attr through_hole)")
	cx, cy := (f.fp.X0+f.fp.X1)/2, (f.fp.Y0+f.fp.Y1)/2
	switch {
	case f.fp.Edge != 0:
		cy = f.fp.Y0/2 - 400 // on the board, between the pads and the courtyard's inner side
	case oneRow(f.fp) && f.fp.Y0 <= -2500:
		// A round part's or a terminal block's pads run through its
		// middle, where a three-character reference (J17) would touch
		// their solder mask: above them.
		cy = f.fp.Y0 + 600
	}
	w.line("(fp_text reference %s (at %v %v) (layer \"F.SilkS\") (effects (font (size 1 1) (thickness 0.15))) (tstamp %s))", quote(c.Ref), cx, cy, uuid(u+"/ref"))
	w.line("(fp_text value %s (at %v %v) (layer \"F.Fab\") (effects (font (size 1 1) (thickness 0.15))) (tstamp %s))", quote(c.Part.Name), cx, cy+1500, uuid(u+"/value"))
	w.line("(fp_rect (start %v %v) (end %v %v) (layer \"F.CrtYd\") (width 0.05) (fill none) (tstamp %s))", f.fp.X0, f.fp.Y0, f.fp.X1, f.fp.Y1, uuid(u+"/courtyard"))
	for i, p := range f.fp.Pads {
		net := ""
		if name, pin, ok := padNet(b, c, p); ok {
			net = fmt.Sprintf(" (net %d %s) (pinfunction %s) (pintype %s)", code[name], quote(name), quote(pinName(c.Part, pin)), quote(kicadPinType(pin.Type)))
		}
		ratio := ""
		if p.RRatio != "" {
			ratio = " (roundrect_rratio " + p.RRatio + ")"
		}
		w.line("(pad %s thru_hole %s (at %v %v%s) (size %v %v) (drill %v) (layers *.Cu *.Mask)%s%s (tstamp %s))",
			quote(p.Num), p.Shape, p.X, p.Y, rot(f.Rot), p.Size, p.Size, p.Drill, ratio, net, uuid(fmt.Sprintf("%s/pad%d", u, i)))
	}
	writeModel(w, c.Part.Footprint)
	w.close()
}

// oneRow reports whether every pad of the footprint is on its origin's row.
func oneRow(fp *footprintDef) bool {
	for _, p := range fp.Pads {
		if p.Y != 0 {
			return false
		}
	}
	return true
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
// prefix "/" removed, pads on no net or on the "unconnected-(…)" net of a
// pin left unconnected left out) and footprint library names by
// reference.
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
		ref := ""
		for _, t := range fp.Children("fp_text") {
			if t.Arg(0) == "reference" {
				ref = t.Arg(1)
			}
		}
		if _, dup := footprints[ref]; dup || ref == "" {
			return nil, nil, fmt.Errorf("kicad: footprint %s without a reference or placed twice", fp.Arg(0))
		}
		footprints[ref] = fp.Arg(0)
		for _, p := range fp.Children("pad") {
			if n := p.Child("net"); n != nil && n.Arg(1) != "" && !strings.HasPrefix(n.Arg(1), "unconnected-(") {
				name := strings.TrimPrefix(n.Arg(1), "/")
				nets[name] = append(nets[name], Node{ref, p.Arg(0)})
			}
		}
	}
	return nets, footprints, nil
}
