package kicad

import (
	"fmt"
	"strings"

	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/lpt"
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
