package kicad

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/hw/kicad/route"
	"github.com/ttlpapers/ttlpapers/lpt"
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
	"Connector_IDC:IDC-Header_2x13_P2.54mm_Vertical": {
		Pads: func() []fpPad {
			var pads []fpPad
			for i := range 26 {
				shape, ratio := "circle", ""
				if i == 0 {
					shape, ratio = "roundrect", "0.147059"
				}
				pads = append(pads, fpPad{strconv.Itoa(i + 1), um(i%2) * 2540, um(i/2) * 2540, shape, 1700, 1000, ratio})
			}
			return pads
		}(),
		X0: -3680, Y0: -5600, X1: 6220, Y1: 36080,
	},
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

// Board layout: each functional group a title over rows of footprints.
const (
	fpGap    um = 2540
	titleH   um = 6350
	boardAt  um = 20000 // the board's top left corner on the page
	edgeSpan um = 5000  // board edge beyond the outermost courtyard
	// idcGap is the room between two IDC headers: each header's 17
	// signals leave it along its sides, 16 tracks a gap.
	idcGap um = 4 * fpGap
)

// Mounting holes: an M3 hole in each corner, holeIn from both edges, and
// no copper nearer its centre than holeKeep (an M3 screw head or washer
// is 7 mm across); no part within holeRoom of the corner.
const (
	holeFootprint    = "MountingHole:MountingHole_3.2mm_M3"
	holeIn        um = 4000
	holeKeep      um = 3600
	holeRoom      um = 8900
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
	titles []groupTitle
	x      um // where its row puts it
	fps    []fpPlaced
	w, h   um
}

// layoutGroup lays out one group's footprints in rows channel apart (more
// than fpGap), each chip with its decoupling capacitor (caps) just above
// it; the other parts (LEDs, resistors) in rows of their own, beside the
// chips when there is room (a row of chips is as tall as three of theirs),
// else below.
func layoutGroup(b *hw.Netlist, in func(*hw.Component) bool, title string, width, channel um, caps map[*hw.Component]*hw.Component) *fpBlock {
	blk := &fpBlock{titles: []groupTitle{{title, 0, titleH / 2}}}
	var chips, others []*hw.Component
	for _, c := range b.Components {
		switch {
		case !in(c) || c.Decouples != nil:
		case caps[c] != nil:
			chips = append(chips, c)
		default:
			others = append(others, c)
		}
	}
	bottom := blk.flow(chips, caps, 0, width, titleH, channel)
	x0, y0 := blk.w+fpGap, um(titleH)
	if len(chips) == 0 || width-x0 < minBeside {
		x0, y0 = 0, max(bottom+fpGap+channel, titleH)
		if len(chips) == 0 {
			y0 = titleH
		}
	}
	bottom = max(bottom, blk.flow(others, caps, x0, width, y0, channel))
	if len(blk.fps) == 0 {
		return nil
	}
	blk.w = max(blk.w, um(len(title))*1800) // 2 mm title text
	blk.h = bottom
	return blk
}

// minBeside is the narrowest room beside a group's chips worth its other
// parts: an LED and its two resistors.
const minBeside um = 40000

// flow lays comps out in rows from (x0, y) to width, and returns the
// bottom of the last row (y when there are none).
func (blk *fpBlock) flow(comps []*hw.Component, caps map[*hw.Component]*hw.Component, x0, width, y, channel um) um {
	x, rowH := x0, um(0)
	for _, c := range comps {
		fp := footprintOf(c)
		w, h := fp.X1-fp.X0, fp.Y1-fp.Y0
		var capFp *footprintDef
		capH := um(0)
		if dc := caps[c]; dc != nil {
			capFp = footprintOf(dc)
			capH = capFp.Y1 - capFp.Y0 + capGap
			w, h = max(w, capFp.X1-capFp.X0), h+capH
		}
		if x > x0 && x+w > width {
			x, y, rowH = x0, y+rowH+fpGap+channel, 0
		}
		if capFp != nil {
			blk.fps = append(blk.fps, fpPlaced{caps[c], capFp, x - capFp.X0, y - capFp.Y0, 0})
		}
		blk.fps = append(blk.fps, fpPlaced{c, fp, x - fp.X0, y + capH - fp.Y0, 0})
		blk.w = max(blk.w, x+w)
		x += w + fpGap
		rowH = max(rowH, h)
	}
	return y + rowH
}

// boardTitles are the groups' titles on the silkscreen: short, so that a
// title is no wider than its parts and the groups pack side by side.
var boardTitles = map[string]string{
	"barrier": "Barrier", "interrupt": "Interrupt", "mux": "Busy mux", "data": "Data NAND",
	"led": "Status LEDs", "power": "Power", "host": "Pi", "shift": "Shifter",
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
// gaps: none up to 8 PEs; beyond, every PE adds a dozen nets that run
// between the connector rows and the chips, so a little per PE: an eighth
// of a DIP pitch. (The 16-PE board with DB-25s, 461 mm wide, needed half
// a pitch per PE: with none it kept 62 grid points shared after 60 passes
// of rip-up and reroute; its IDC headers now keep the tracks short.)
func channelFor(b *hw.Netlist) um { return um(max(b.PEs-8, 0)) * fpGap / 8 }

// connectorRow is how the cable connectors sit along the bottom and top
// edges.
type connectorRow struct {
	fp      *footprintDef
	perEdge int // how many go along the bottom edge (the rest go on top)
	pitch   um
}

// placeFootprints puts the cable connectors along the board's bottom and
// top edges (those on top turned round), half on each, so the board is
// half as wide as its connectors in one row, and every other component
// between them on a grid by functional group (the groups flowing left to
// right in rows, like the schematic's areas). A DB-25 sits on the edge,
// mating side out; an IDC header, which takes its ribbon from above,
// just inside it.
func placeFootprints(b *hw.Netlist) *pcbLayout {
	conns, caps := edgeAndCaps(b)
	var row connectorRow
	span := um(0) // the connectors' row, end to end
	if len(conns) > 0 {
		row.fp = footprintOf(conns[0])
		gap := fpGap
		if row.fp.Edge == 0 {
			gap = idcGap
		}
		row.pitch = row.fp.X1 - row.fp.X0 + gap
		row.perEdge = (len(conns) + 1) / 2
		span = um(row.perEdge)*row.pitch - gap
	}
	width := span + 2*(holeRoom-edgeSpan) // the rows of parts, as wide as the connectors with the holes beside them
	l := &pcbLayout{left: boardAt, top: boardAt, channel: channelFor(b)}
	split := min(row.perEdge, len(conns))
	gridTop := l.topConnectors(conns[split:], row)
	var gridBottom um
	if row.fp != nil && row.fp.Edge == 0 {
		gridBottom = l.slices(b, caps, width, gridTop, row.perEdge)
	} else {
		gridBottom = l.groups(b, caps, width, gridTop)
	}
	l.bottom = gridBottom + edgeSpan
	l.bottomConnectors(conns[:split], row, gridBottom)
	l.right = max(l.right+edgeSpan, l.left+2*holeRoom+span)
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
		if f.fp.Edge == 0 {
			l.fps[i].X, l.fps[i].Y = on(f.X, l.left), on(f.Y, l.top)
		}
	}
}

// edgeAndCaps returns the cable connectors (PE k's is conns[k]) and each
// chip's decoupling capacitor.
func edgeAndCaps(b *hw.Netlist) (conns []*hw.Component, caps map[*hw.Component]*hw.Component) {
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
// origin), and returns where the grid can start below them: below the
// corners' mounting holes when there are none.
func (l *pcbLayout) topConnectors(conns []*hw.Component, row connectorRow) (gridTop um) {
	gridTop = l.top + holeRoom
	first := row.perEdge // the PE of conns[0]
	for i, c := range conns {
		x := l.left + holeRoom + um(i)*row.pitch
		top := l.top + edgeSpan // the courtyard's top
		if row.fp.Edge != 0 {
			top = l.top + row.fp.Edge - row.fp.Y1
		}
		oy := top + row.fp.Y1
		l.fps = append(l.fps, fpPlaced{c, row.fp, x + row.fp.X1, oy, 180})
		l.titles = append(l.titles, groupTitle{fmt.Sprintf("PE %d", first+i), x, oy - row.fp.Y0 + fpGap})
		gridTop = oy - row.fp.Y0 + 2*fpGap + l.band(row)
	}
	return gridTop
}

// nameBlock is the board's name, PE count and revision, a group without
// parts on two lines ("TTL_PAPERS", "4-PE rev 1").
func nameBlock(b *hw.Netlist) *fpBlock {
	lines := boardTitle(b)
	return &fpBlock{titles: []groupTitle{{lines[0], 0, titleH / 2}, {lines[1], 0, titleH/2 + titleLine}},
		w: um(max(len(lines[0]), len(lines[1]))) * 1800, h: titleH + titleLine}
}

// groups lays the board's title and its functional groups out in rows of
// the given width from gridTop, and returns the bottom of the last row.
func (l *pcbLayout) groups(b *hw.Netlist, caps map[*hw.Component]*hw.Component, width, gridTop um) (gridBottom um) {
	blks := []*fpBlock{nameBlock(b)}
	for _, ar := range areas {
		if ar.group == edgeGroup {
			continue
		}
		if blk := layoutGroup(b, func(c *hw.Component) bool { return c.Group == ar.group }, boardTitles[ar.group], width, l.channel, caps); blk != nil {
			blks = append(blks, blk)
		}
	}
	return l.rows(pack(blks, width), gridTop)
}

// pack puts each block into the first row with room for it (a small one
// fills the end of an earlier row), setting its x.
func pack(blks []*fpBlock, width um) [][]*fpBlock {
	var rows [][]*fpBlock
	var ends []um
	for _, blk := range blks {
		i := 0
		for i < len(rows) && ends[i]+2*fpGap+blk.w > width {
			i++
		}
		if i == len(rows) {
			rows, ends = append(rows, nil), append(ends, -2*fpGap)
		}
		blk.x = ends[i] + 2*fpGap
		rows[i], ends[i] = append(rows[i], blk), blk.x+blk.w
	}
	return rows
}

// rows places rows of blocks one under another from gridTop, and returns
// the bottom of the last.
func (l *pcbLayout) rows(rows [][]*fpBlock, gridTop um) (gridBottom um) {
	y := gridTop
	for _, r := range rows {
		h := um(0)
		for _, blk := range r {
			ox := l.left + edgeSpan + blk.x
			for _, t := range blk.titles {
				l.titles = append(l.titles, groupTitle{t.text, ox + t.X, y + t.Y})
			}
			for _, f := range blk.fps {
				f.X, f.Y = f.X+ox, f.Y+y
				l.fps = append(l.fps, f)
			}
			l.right = max(l.right, ox+blk.w)
			h = max(h, blk.h)
		}
		y += h + 2*fpGap + l.channel
	}
	return y - 2*fpGap - l.channel
}

// slices lays out a board of IDC headers by its PEs' eights: each eight's
// own parts (their share of the trees, their Busy multiplexers, LED
// drivers, LEDs) in a block beside its eight headers, above the bottom
// row or below the top one; the parts all PEs share (the flip-flops and
// their drivers, the OR of the trees' parts, the data line drivers,
// power) in rows between. The tracks from a PE's header then run to parts
// beside it, not across the board.
func (l *pcbLayout) slices(b *hw.Netlist, caps map[*hw.Component]*hw.Component, width, gridTop um, perEdge int) (gridBottom um) {
	slice := slicesOf(b)
	n := um(perEdge / 8) // eights along an edge
	blockW := (width - (n-1)*2*fpGap) / n
	block := func(s int) *fpBlock {
		return layoutGroup(b, func(c *hw.Component) bool { return slice[c] == s && c.Group != edgeGroup }, fmt.Sprintf("PEs %d-%d", 8*s, 8*s+7), blockW, l.channel, caps)
	}
	var top, bottom []*fpBlock
	for s := range b.PEs / 8 {
		if 8*s < perEdge {
			bottom = append(bottom, block(s))
		} else {
			top = append(top, block(s))
		}
	}
	shared := []*fpBlock{nameBlock(b)}
	for _, ar := range areas {
		in := func(c *hw.Component) bool { return c.Group == ar.group && slice[c] < 0 }
		if blk := layoutGroup(b, in, boardTitles[ar.group], width, l.channel, caps); ar.group != edgeGroup && blk != nil {
			shared = append(shared, blk)
		}
	}
	rows := append(pack(top, width), pack(shared, width)...)
	return l.rows(append(rows, pack(bottom, width)...), gridTop)
}

// slicesOf gives each part the eight of PEs (0 for PEs 0-7, …) whose
// signals alone it serves, by the nets on its pins — those of the PEs'
// cables, and those named for a PE — or -1 for a part that serves PEs of
// different eights, or none. A decoupling capacitor goes with its chip.
func slicesOf(b *hw.Netlist) map[*hw.Component]int {
	pe := map[string]int{} // net name → the PE whose cable or LED it is
	for k := range b.PEs {
		for _, l := range lpt.Lines {
			if n := b.NetOf(b.PortNode(k, l.Pin)); n != nil && n.Name != hw.GND {
				if old, ok := pe[n.Name]; ok && old/8 != k/8 {
					pe[n.Name] = -8 // shared by eights (a data line driven for several)
				} else if !ok {
					pe[n.Name] = k
				}
			}
		}
	}
	out := map[*hw.Component]int{}
	for _, c := range b.Components {
		s := -2 // none yet
		for _, p := range c.Part.Pins {
			n := b.NetOf(hw.Node{Ref: c.Ref, Pin: p.Num})
			if n == nil {
				continue
			}
			k, ok := pe[n.Name]
			if !ok {
				var x int
				if _, err := fmt.Sscanf(n.Name, "PE%d.", &x); err == nil {
					k, ok = x, true
				}
			}
			switch {
			case !ok:
			case k < 0 || (s >= 0 && s != k/8):
				s = -1
			case s == -2:
				s = k / 8
			}
			if s == -1 {
				break
			}
		}
		out[c] = max(s, -1)
	}
	for _, c := range b.Components {
		if c.Decouples != nil {
			out[c] = out[c.Decouples]
		}
	}
	return out
}

// band is the room between a row of connectors and the parts: twice the
// channel beside IDC headers, where every signal of eight PEs turns along
// the board to its chip.
func (l *pcbLayout) band(row connectorRow) um {
	if row.fp.Edge == 0 {
		return 2 * l.channel
	}
	return l.channel
}

// bottomConnectors places the first perEdge connectors on the bottom edge,
// below the grid, and moves the outline's bottom to their edge.
func (l *pcbLayout) bottomConnectors(conns []*hw.Component, row connectorRow, gridBottom um) {
	for i, c := range conns {
		x, oy := l.left+holeRoom+um(i)*row.pitch, gridBottom+2*fpGap+l.band(row)-row.fp.Y0
		l.fps = append(l.fps, fpPlaced{c, row.fp, x - row.fp.X0, oy, 0})
		title := fmt.Sprintf("PE %d", i)
		if len(conns) == 1 && c.Part == hw.DB25Socket {
			title = "Printer cable to the board" // the Pi adapter's port
		}
		l.titles = append(l.titles, groupTitle{title, x, oy + row.fp.Y0 - fpGap})
		l.bottom = oy + row.fp.Y1 + edgeSpan
		if row.fp.Edge != 0 {
			l.bottom = oy + row.fp.Edge
		}
	}
}

// titleLine is the line spacing of the board's title.
const titleLine um = 3175

// boardTitle is the board's name, PE count and revision on the
// silkscreen, in two lines.
func boardTitle(b *hw.Netlist) [2]string {
	first, rest, _ := strings.Cut(strings.Replace(b.Name, "Raspberry Pi", "Pi", 1), " ")
	return [2]string{first, rest + " rev " + b.Revision}
}

// holes are the centres of the mounting holes, one in each corner.
func (l *pcbLayout) holes() [][2]um {
	return [][2]um{{l.left + holeIn, l.top + holeIn}, {l.right - holeIn, l.top + holeIn},
		{l.left + holeIn, l.bottom - holeIn}, {l.right - holeIn, l.bottom - holeIn}}
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
func PCB(b *hw.Netlist, schematicFile string) ([]byte, error) {
	// A pin on no net takes the name its library symbol gives it.
	if _, err := installed(); err != nil {
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
	code := writeNets(w, b, l)
	for _, f := range l.fps {
		writeFootprint(w, b, key, schematicFile, f, code)
	}
	for i, h := range l.holes() {
		writeHole(w, key, i, h)
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
func writeNets(w *writer, b *hw.Netlist, l *pcbLayout) map[string]int {
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
func writeFootprint(w *writer, b *hw.Netlist, key, schematicFile string, f fpPlaced, code map[string]int) {
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
	cx, cy := refAt(f)
	w.line("(fp_text reference %s (at %v %v) (layer \"F.SilkS\") (effects (font (size 1 1) (thickness 0.15))) (tstamp %s))", quote(c.Ref), cx, cy, uuid(u+"/ref"))
	w.line("(fp_text value %s (at %v %v) (layer \"F.Fab\") (effects (font (size 1 1) (thickness 0.15))) (tstamp %s))", quote(c.Part.Name), cx, cy+1500, uuid(u+"/value"))
	w.line("(fp_rect (start %v %v) (end %v %v) (layer \"F.CrtYd\") (width 0.05) (fill none) (tstamp %s))", f.fp.X0, f.fp.Y0, f.fp.X1, f.fp.Y1, uuid(u+"/courtyard"))
	for i, g := range librarySilk[c.Part.Footprint] {
		if f.fp.Edge != 0 {
			g = clipToEdge(g, f.fp.Edge-silkEdge)
		}
		w.line("%s (tstamp %s))", g, uuid(fmt.Sprintf("%s/silk%d", u, i)))
	}
	for i, m := range marks(c) {
		w.line("(fp_text user %s (at %v %v%s) (layer \"F.SilkS\") (effects (font (size 1 1) (thickness 0.15))) (tstamp %s))", quote(m.text), m.X, m.Y, rot(f.Rot), uuid(fmt.Sprintf("%s/mark%d", u, i)))
	}
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

// silkEdge keeps an edge connector's outline this far inside the board's
// edge (KiCad's library draws it out to the housing, over the edge).
const silkEdge um = 500

// clipToEdge cuts a footprint's silkscreen line at y = edge, where the
// board ends under an edge connector.
func clipToEdge(g string, edge um) string {
	var x0, y0, x1, y1 float64
	var rest string
	if n, _ := fmt.Sscanf(g, "(fp_line (start %g %g) (end %g %g)%s", &x0, &y0, &x1, &y1, &rest); n < 4 {
		return g
	}
	e := float64(edge) / 1000
	if (y0 <= e && y1 <= e) || x0 != x1 {
		return g
	}
	y0, y1 = min(y0, e), min(y1, e)
	return fmt.Sprintf("(fp_line (start %v %v) (end %v %v)%s", x0, y0, x1, y1, g[strings.Index(g, ") (layer")+1:])
}

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

// writeHole writes mounting hole i, a footprint of the board alone (no
// schematic symbol, no BOM line, no position).
func writeHole(w *writer, key string, i int, at [2]um) {
	u := fmt.Sprintf("%spcb/hole%d", key, i)
	w.open("(footprint %s (layer \"F.Cu\")", quote(holeFootprint))
	w.line("(tstamp %s)", uuid(u))
	w.line("(at %v %v)", at[0], at[1])
	w.line("(descr \"M3 mounting hole\")")
	w.line("(attr board_only exclude_from_pos_files exclude_from_bom)")
	w.line("(fp_text reference \"H%d\" (at 0 0) (layer \"F.Fab\") (effects (font (size 1 1) (thickness 0.15))) (tstamp %s))", i+1, uuid(u+"/ref"))
	w.line("(fp_text value \"M3\" (at 0 4.15) (layer \"F.Fab\") (effects (font (size 1 1) (thickness 0.15))) (tstamp %s))", uuid(u+"/value"))
	w.line("(fp_circle (center 0 0) (end 3.2 0) (layer \"Cmts.User\") (width 0.15) (fill none) (tstamp %s))", uuid(u+"/head"))
	w.line("(fp_circle (center 0 0) (end 3.45 0) (layer \"F.CrtYd\") (width 0.05) (fill none) (tstamp %s))", uuid(u+"/courtyard"))
	w.line("(pad \"\" np_thru_hole circle (at 0 0) (size 3.2 3.2) (drill 3.2) (layers *.Cu *.Mask) (tstamp %s))", uuid(u+"/pad"))
	w.close()
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
// reference (footprints of the board alone, such as mounting holes, left
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
		if a := fp.Child("attr"); a != nil && hasAtom(a, "board_only") {
			continue // a mounting hole: no part of the circuit
		}
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
