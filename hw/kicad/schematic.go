package kicad

import (
	"crypto/sha1"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ttlpapers/ttlpapers/hw"
)

// writer emits indented S-expressions line by line.
type writer struct {
	b     strings.Builder
	depth int
}

func (w *writer) line(format string, args ...any) {
	w.b.WriteString(strings.Repeat("  ", w.depth))
	fmt.Fprintf(&w.b, format, args...)
	w.b.WriteByte('\n')
}

func (w *writer) open(format string, args ...any) {
	w.line(format, args...)
	w.depth++
}

func (w *writer) close() {
	w.depth--
	w.line(")")
}

// uuid derives a stable identifier from a name, so regenerating the files
// changes nothing unless the circuit does.
func uuid(name string) string {
	h := sha1.Sum([]byte(name))
	h[6] = h[6]&0x0f | 0x50 // version 5 (name-based, SHA-1)
	h[8] = h[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// Areas of the schematic, one per functional group of hw.Component.Group,
// left to right; sub titles an area on a sheet below the root (when it
// differs): there the trees are their first level, for the sheet's PEs.
var areas = []struct{ group, title, sub string }{
	{"cable", "Cable connectors: one %s per PE", ""}, // the board's connector
	{"barrier", "Barrier: S0/S1 NAND trees and flip-flops", "Barrier: S0/S1 NANDs"},
	{"interrupt", "Interrupt request and acknowledge trees", "IRQ and ack NANDs"},
	{"mux", "Per-PE Busy multiplexers (P_SEL)", ""},
	{"data", "Data NAND and line drivers", "Data NANDs and line drivers"},
	{"led", "Status LEDs: green and red per PE", ""},
	{"power", "Power input, decoupling, power light", "Supply pins and decoupling"},
	{"host", "Pi header", ""},      // the Pi adapter's: short titles, as its board is narrow
	{"shift", "3.3 V shifter", ""}, // board outputs to the Pi's 3.3 V inputs
	{holeGroup, "Mounting holes", ""},
}

// piPortTitle titles the Pi adapter's connector area: its one DB-25 is a
// printer port, female as a PC's is.
const piPortTitle = "Printer port (DB-25 female socket)"

// cableName names a cable connector part in the schematic's title.
var cableName = map[*hw.Part]string{hw.DB25: "DB-25", hw.IDC26: "IDC-26 header"}

// placed is a component at its place on the sheet (X, Y: symbol origin,
// sheet coordinates, Y down).
type placed struct {
	c    *hw.Component
	sym  *symbolDef
	sh   *subSheet // or a sheet's symbol, on the root of a hierarchy
	X, Y coord
}

type area struct {
	title      string
	x, y, w, h coord
	cells      []*placed
}

// papers are the standard sheet sizes tried in turn (landscape, mm/100).
var papers = []struct {
	name string
	w, h coord
}{{"A4", 29700, 21000}, {"A3", 42000, 29700}, {"A2", 59400, 42000}, {"A1", 84100, 59400}, {"A0", 118900, 84100}}

const (
	margin     coord = 2540 // sheet frame and title text
	titleBlock coord = 4064 // height kept free at the bottom for the title block
	stubLen    coord = 508  // wire from a side pin to its label
	labelChar  coord = 110  // width of one label character at 1.27 mm
)

// room is how far beyond a unit's pins on side sd their stubs reach with
// their labels or power symbols (0: no pin there is on a net).
func room(b *hw.Netlist, c *hw.Component, s *symbolDef, sd side) coord {
	n, used := 0, false
	for _, p := range s.Pins {
		if p.Side != sd {
			continue
		}
		if net := b.NetOf(hw.Node{Ref: c.Ref, Pin: p.Num}); net != nil {
			used = true
			n = max(n, displayLen(net.Name))
			if net.Name == hw.VCC || net.Name == hw.GND {
				n = max(n, 5)
			}
		}
	}
	if !used {
		return 0
	}
	_, _, stub := sideDir(sd)
	return stub + coord(n)*labelChar + pin
}

// textsRight reports whether a unit's reference and value go to its right:
// a unit with pins only above and below (a resistor, a chip's supply pins)
// has labels there.
func textsRight(s *symbolDef) bool {
	for _, p := range s.Pins {
		if p.Side == left || p.Side == right {
			return false
		}
	}
	return true
}

// cellSize is the room one unit needs with its labels; (ox, oy) is the
// symbol origin inside the cell, on the pin grid so that every pin is on
// KiCad's connection grid.
func cellSize(b *hw.Netlist, c *hw.Component, s *symbolDef) (w, h, ox, oy coord) {
	l, r := room(b, c, s, left), room(b, c, s, right)
	if textsRight(s) {
		r = max(r, grid+coord(max(len(c.Ref)+1, len(c.Part.Name)))*labelChar)
	}
	ox = roundUp(l-s.All.X0+pin, pin)
	w = max(ox+s.All.X1+r, ox+s.All.X0+coord(len(c.Part.Name))*labelChar) + 2*pin
	oy = roundUp(s.All.Y1+room(b, c, s, top)+2*pin, pin) // and the reference
	h = oy - s.All.Y0 + room(b, c, s, bottom) + 3*pin
	return roundUp(w, pin), roundUp(h, pin), ox, oy
}

// layout places every component on the smallest standard sheet that holds
// them: each area fills columns top to bottom, areas flow left to right in
// rows.
func layout(pg *page, syms map[string][]*symbolDef) (paper string, pw, ph coord, out []*area) {
	for _, p := range papers {
		inner, maxW := p.h-2*margin-titleBlock, p.w-2*margin
		for _, colH := range []coord{inner / 3, inner / 2, inner} {
			out = flow(pg, syms, colH, maxW)
			w, h := extent(out)
			if w <= p.w-margin && h <= p.h-margin-titleBlock {
				return p.name, p.w, p.h, out
			}
		}
	}
	// Beyond A0: one row, as wide as it needs.
	a0 := papers[len(papers)-1]
	out = flow(pg, syms, a0.h-2*margin-titleBlock, 1<<30)
	w, _ := extent(out)
	return "User", roundUp(w+margin, 2540), a0.h, out
}

func extent(as []*area) (w, h coord) {
	for _, a := range as {
		w, h = max(w, a.x+a.w), max(h, a.y+a.h)
	}
	return w, h
}

// flow lays a page's areas out in rows no wider than maxW.
func flow(pg *page, syms map[string][]*symbolDef, colH, maxW coord) []*area {
	b := pg.b
	var out []*area
	x, y, rowH := margin+pin, margin+pin, coord(0)
	for _, ar := range append(areas, sheetsArea) {
		title := ar.title
		if pg.sheet != nil && ar.sub != "" {
			title = ar.sub
		}
		switch {
		case ar.group == "cable" && b.Name == hw.PiAdapterName:
			title = piPortTitle
		case ar.group == "cable":
			title = fmt.Sprintf(title, cableName[hw.CableConnector(b.PEs)])
		case ar.group == sheetsArea.group:
			title = fmt.Sprintf(title, sheetPEs)
		}
		a := layoutArea(pg, syms, ar.group, title, colH)
		if a == nil {
			continue
		}
		if x > margin+pin && x+a.w > margin+maxW {
			x, y, rowH = margin+pin, y+rowH+2*pin, 0
		}
		a.x, a.y = x, y
		for _, pl := range a.cells {
			pl.X, pl.Y = pl.X+x, pl.Y+y
		}
		out = append(out, a)
		x += a.w + 2*pin
		rowH = max(rowH, a.h)
	}
	return out
}

// cell is one unit of one component, or a sheet's symbol, to be placed.
type cell struct {
	c  *hw.Component
	s  *symbolDef
	sh *subSheet
}

// cellsOf lists the units a group's area on a page places: its
// components' units, in board order; the power area also takes every
// multi-unit chip's supply unit. The root of a hierarchy has an area of
// its sheets' symbols.
func cellsOf(pg *page, syms map[string][]*symbolDef, group string) []cell {
	var out []cell
	switch {
	case group == sheetsArea.group:
		for _, sh := range pg.subSheets() {
			out = append(out, cell{sh: sh})
		}
		return out
	case group == holeGroup && pg.sheet == nil:
		for _, c := range mountingHoles() {
			out = append(out, cell{c: c, s: syms[holePart.Symbol][0]})
		}
		return out
	}
	for _, supply := range []bool{true, false} {
		if supply && group != "power" {
			continue
		}
		for _, c := range pg.b.Components {
			if !pg.holds(c) {
				continue
			}
			units := syms[c.Part.Symbol]
			for _, u := range units {
				isSupply := len(units) > 1 && u.supplyOnly()
				if isSupply == supply && (supply || c.Group == group) {
					out = append(out, cell{c: c, s: u})
				}
			}
		}
	}
	return out
}

// layoutArea places one group's units in columns at most colH high,
// relative to the area's top left corner.
func layoutArea(pg *page, syms map[string][]*symbolDef, group, title string, colH coord) *area {
	a := &area{title: title}
	top := 3 * pin
	colX, colW, y := pin, coord(0), top
	for _, cl := range cellsOf(pg, syms, group) {
		var w, h, ox, oy coord
		if cl.sh != nil {
			w, h, ox, oy = pg.sheetCellSize(cl.sh)
		} else {
			w, h, ox, oy = cellSize(pg.b, cl.c, cl.s)
		}
		if y+h > colH && y > top {
			colX, colW, y = colX+colW, 0, top
		}
		a.cells = append(a.cells, &placed{c: cl.c, sym: cl.s, sh: cl.sh, X: colX + ox, Y: y + oy})
		colW = max(colW, w)
		y += h
		a.h = max(a.h, y)
	}
	if len(a.cells) == 0 {
		return nil
	}
	// 2.54 mm bold title; a width on the pin grid keeps every pin of the
	// areas to its right on KiCad's 1.27 mm connection grid.
	a.w = roundUp(max(colX+colW, coord(len(title))*230+2*pin), pin)
	return a
}

// Schematic renders the board's root sheet (all of it for a board drawn
// on one sheet) as a KiCad schematic. Every pin of every part gets a
// short wire ending in a net label (named as the hw net) or a power
// symbol; unused inputs and outputs get a no-connect flag.
func Schematic(b *hw.Netlist) ([]byte, error) {
	scs, err := draw(b)
	if err != nil {
		return nil, err
	}
	return []byte(scs[0].w.b.String()), nil
}

// Schematics renders every sheet of the board's schematic, keyed by file
// name: the root, BaseOf(b)+".kicad_sch", and on a board beyond 8 PEs one
// sheet per group of 8 PEs beside it.
func Schematics(b *hw.Netlist) (map[string][]byte, error) {
	scs, err := draw(b)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, sc := range scs {
		out[sc.file] = []byte(sc.w.b.String())
	}
	return out, nil
}

// draw writes the schematic's sheets, the root first.
func draw(b *hw.Netlist) ([]*schematic, error) {
	syms, err := symbols(b)
	if err != nil {
		return nil, err
	}
	if syms[holePart.Symbol], err = unitsOf(holePart); err != nil {
		return nil, err
	}
	h := newHierarchy(b)
	root := &page{b: b, h: h}
	pages := []*page{root}
	for _, sh := range h.subSheets() {
		pages = append(pages, &page{b: b, h: h, sheet: sh})
	}
	key := b.Name + "/"
	n := &counters{}
	var out []*schematic
	for i, pg := range pages {
		paper, pw, ph, as := layout(pg, syms)
		sc := &schematic{b: b, pg: pg, key: key, project: BaseOf(b), supply: supply(b), n: n,
			file: BaseOf(b) + ".kicad_sch", path: "/" + uuid(key+"sheet"), page: i + 1}
		if pg.sheet != nil {
			sc.file, sc.path = pg.sheet.file, sc.path+"/"+pg.sheet.uuid(key)
		}
		if err := sc.header(paper, pw, ph, as, syms); err != nil {
			return nil, err
		}
		for _, a := range as {
			sc.frame(a)
			for _, pl := range a.cells {
				if pl.sh != nil {
					sc.sheetSymbol(pl)
					continue
				}
				for _, p := range pl.sym.Pins {
					sc.pinEnd(pl, p)
				}
				sc.symbol(pl)
			}
		}
		sc.footer()
		out = append(out, sc)
	}
	return out, nil
}

// schematic is one sheet of a schematic being written.
type schematic struct {
	w          writer
	b          *hw.Netlist
	pg         *page
	key        string      // prefix of every uuid's name
	project    string      // the project's name, which symbol instances give
	file       string      // the sheet's file name
	path       string      // the sheet's instance path: the root's uuid, then its sheet symbol's
	page       int         // its page number
	n          *counters   // shared by every sheet
	exclusions [][2]string // the rules check's right findings: KiCad's key, and why
	supply     *hw.Component
}

// counters number the power symbols and PWR_FLAGs placed, across sheets:
// their references are unique in the schematic.
type counters struct{ pwr, flags int }

// supply is the part whose pins carry a PWR_FLAG on each supply net:
// KiCad's electrical rules check wants every power input pin driven by a
// power output, and our supplies enter through connector pins, which are
// passive. It is a two-pin part on both supply nets with room around its
// pins: the bulk capacitor at the power input (the terminal's +5 V pin is
// on the fuse's far side), or on the Pi adapter, powered through the Pi's
// header, its decoupling capacitor.
func supply(b *hw.Netlist) *hw.Component {
	var c *hw.Component
	for _, x := range b.Components {
		if x.Part == hw.Cap10u && x.Group == "power" {
			return x
		}
		if c == nil && x.Part == hw.Cap100n {
			c = x
		}
	}
	return c
}

// header opens the file (KiCad 9's format, that of the library symbols
// it embeds): paper, title block and the library symbols the sheet uses.
func (sc *schematic) header(paper string, pw, ph coord, as []*area, syms map[string][]*symbolDef) error {
	w, b := &sc.w, sc.b
	w.open("(kicad_sch (version 20250114) (generator \"ttlpapers\") (generator_version \"9.0\")")
	w.line("")
	w.line("(uuid %s)", quote(sc.sheet()))
	w.line("")
	if paper == "User" {
		w.line("(paper \"User\" %v %v)", pw, ph)
	} else {
		w.line("(paper %s)", quote(paper))
	}
	w.line("")
	w.open("(title_block")
	title := b.Name
	if sh := sc.pg.sheet; sh != nil {
		title += fmt.Sprintf(": PEs %d to %d", sh.first, sh.first+sheetPEs-1)
	}
	w.line("(title %s)", quote(title))
	w.line("(rev %s)", quote(b.Revision))
	w.line("(company \"ttlpapers\")")
	w.line("(comment 1 %s)", quote("Generated from the hw netlist by papersctl kicad: do not edit, regenerate."))
	w.line("(comment 2 %s)", quote("TTL_PAPERS (Dietz, Mattox, Krishnamurthy, Purdue 1995), reconstructed at gate level."))
	w.line("(comment 3 %s)", quote(Notice))
	w.close()
	w.line("")
	w.open("(lib_symbols")
	used := map[string]bool{"power:" + hw.GND: true, "power:" + hw.VCC: true}
	for _, a := range as {
		for _, pl := range a.cells {
			if pl.sym != nil {
				used[pl.sym.LibID] = true
				used[flagLibID] = used[flagLibID] || pl.c == sc.supply
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(used)) {
		sym, err := LibSymbol(id)
		if err != nil {
			return err
		}
		writeExpr(w, sym)
	}
	w.close()
	w.line("")
	return nil
}

// sheet is the sheet file's uuid: the root's names the root in instance
// paths.
func (sc *schematic) sheet() string {
	if sh := sc.pg.sheet; sh != nil {
		return uuid(sc.key + "sheetfile/" + sh.name)
	}
	return uuid(sc.key + "sheet")
}

// frame draws an area's dashed frame and title. KiCad 6.0 reads a
// sheet-level polyline as one two-point line, so the frame is four of them.
func (sc *schematic) frame(a *area) {
	corners := [5][2]coord{{a.x, a.y}, {a.x + a.w, a.y}, {a.x + a.w, a.y + a.h}, {a.x, a.y + a.h}, {a.x, a.y}}
	for i := range 4 {
		p, q := corners[i], corners[i+1]
		sc.w.line("(polyline (pts (xy %v %v) (xy %v %v)) (stroke (width 0) (type dash) (color 0 0 0 0)) (uuid %s))",
			p[0], p[1], q[0], q[1], quote(uuid(fmt.Sprintf("%sarea/%s/%d", sc.key, a.title, i))))
	}
	sc.w.line("(text %s (at %v %v 0) (effects (font (size 2.54 2.54) bold) (justify left bottom)) (uuid %s))",
		quote(a.title), a.x+pin, a.y+2*pin, quote(uuid(sc.key+"title/"+a.title)))
}

// pinEnd ends pin p of a placed part: a short wire to a net label or a
// power symbol, or a no-connect flag.
func (sc *schematic) pinEnd(pl *placed, p symPin) {
	w, c := &sc.w, pl.c
	px, py := pl.X+p.X, pl.Y-p.Y
	id := sc.key + c.Ref + "." + fmt.Sprint(p.Num)
	net := sc.b.NetOf(hw.Node{Ref: c.Ref, Pin: p.Num})
	if net == nil {
		// An unused input or output gets a no-connect flag; a pin the chip
		// itself leaves unconnected (NC) needs none, and KiCad's rules
		// check calls a flag on it dangling.
		if p.Type != hw.PinNC {
			w.line("(no_connect (at %v %v) (uuid %s))", px, py, quote(uuid(id+"/nc")))
		}
		return
	}
	dx, dy, length := sideDir(p.Side)
	ex, ey := px+dx*length, py+dy*length
	w.line("(wire (pts (xy %v %v) (xy %v %v)) (stroke (width 0) (type default) (color 0 0 0 0)) (uuid %s))",
		px, py, ex, ey, quote(uuid(id+"/wire")))
	if net.Name == hw.VCC || net.Name == hw.GND {
		sc.power(id, net.Name, p.Side, ex, ey)
		if p.LibType == "tri_state" || p.LibType == "bidirectional" {
			sc.exclude(c, p, px, py, id)
		}
	} else if sc.pg.h.crosses(net.Name, sc.pg.sheet) {
		angle, just := labelAngle(p.Side)
		w.line("(hierarchical_label %s (shape %s) (at %v %v %d) (effects (font (size 1.27 1.27)) (justify %s)) (uuid %s))",
			quote(net.Name), sc.pg.shape(net), ex, ey, angle, just, quote(uuid(id+"/label")))
	} else {
		angle, just := labelAngle(p.Side)
		w.line("(label %s (at %v %v %d) (effects (font (size 1.27 1.27)) (justify %s bottom)) (uuid %s))",
			quote(net.Name), ex, ey, angle, just, quote(uuid(id+"/label")))
	}
	if c == sc.supply {
		sc.flag(id, net.Name, ex, ey)
	}
}

// exclude records the pin-to-pin finding KiCad's rules check makes of a
// transceiver's pin on a supply net, and why it is right: such a pin is
// an input where the board fixes the part's direction, and an unused CMOS
// input is tied to a supply. The key is KiCad's for the finding: rule,
// position (1/10000 mm), the pin's and the power symbol's pin's uuids, and
// the sheet's path thrice (where it was found, and of each item).
func (sc *schematic) exclude(c *hw.Component, p symPin, px, py coord, id string) {
	sheet := sc.path
	key := fmt.Sprintf("pin_to_pin|%d|%d|%s|%s|%s|%s|%s", px*100, py*100,
		uuid(sc.key+c.Ref+"/pin/"+fmt.Sprint(p.Num)), uuid(id+"/power/pin"), sheet, sheet, sheet)
	why := fmt.Sprintf("%s pin %d (%s): KiCad draws it three-state; with the part's direction fixed it is an input, unused and tied to a supply", c.Ref, p.Num, p.LibName)
	sc.exclusions = append(sc.exclusions, [2]string{key, why})
}

// power places the power symbol of net at a wire's end (x, y).
func (sc *schematic) power(id, net string, s side, x, y coord) {
	sc.n.pwr++
	rot := powerRotation(net, s)
	vx, vy := powerValueAt(net, rot)
	sc.placePower(id+"/power", "power:"+net, fmt.Sprintf("#PWR%04d", sc.n.pwr), net, x, y, rot, vx, vy)
}

// flag places a PWR_FLAG at a wire's end (x, y) on a supply net, pointing
// down, clear of a label's text above the wire; on VCC, the supply
// part's upper pin, up, away from GND's flag below.
func (sc *schematic) flag(id, net string, x, y coord) {
	sc.n.flags++
	rot, vy := 180, pin+grid
	if net == hw.VCC {
		rot, vy = 0, -pin-grid
	}
	sc.placePower(id+"/flag", flagLibID, fmt.Sprintf("#FLG%02d", sc.n.flags), "PWR_FLAG", x, y, rot, 0, vy)
}

// symbol places one unit of a part with its properties. Unit 1 has the
// uuid the board's footprint links to.
func (sc *schematic) symbol(pl *placed) {
	w, c, s := &sc.w, pl.c, pl.sym
	id := sc.key + c.Ref
	if s.Unit > 1 {
		id += fmt.Sprintf("/unit%d", s.Unit)
	}
	inBOM := "yes"
	if c.Part == holePart {
		inBOM = "no"
	}
	w.open("(symbol (lib_id %s) (at %v %v 0) (unit %d) (exclude_from_sim no) (in_bom %s) (on_board yes) (dnp no)", quote(s.LibID), pl.X, pl.Y, s.Unit, inBOM)
	w.line("(uuid %s)", quote(uuid(id)))
	// Above and below the unit, at its left, clear of pins above and
	// below (which sit mid-body) and of their labels.
	refAt, valueAt := fmt.Sprintf("%v %v", pl.X+s.All.X0, pl.Y-s.All.Y1-grid), fmt.Sprintf("%v %v", pl.X+s.All.X0, pl.Y-s.All.Y0+grid/2)
	refJust, valueJust := "left bottom", "left top"
	if textsRight(s) {
		x := pl.X + s.All.X1 + grid
		refAt, valueAt = fmt.Sprintf("%v %v", x, pl.Y-grid/2), fmt.Sprintf("%v %v", x, pl.Y+grid/2)
		refJust, valueJust = "left bottom", "left top"
	}
	w.line("(property \"Reference\" %s (at %s 0) (effects (font (size 1.27 1.27)) (justify %s)))", quote(c.Ref), refAt, refJust)
	w.line("(property \"Value\" %s (at %s 0) (effects (font (size 1.27 1.27)) (justify %s)))", quote(c.Part.Name), valueAt, valueJust)
	for _, f := range [][2]string{{"Footprint", c.Part.Footprint}, {"Datasheet", s.Datasheet}, {"Description", s.Description}, {"Role", c.Role}} {
		w.line("(property %s %s (at %v %v 0) %s)", quote(f[0]), quote(f[1]), pl.X, pl.Y, fontHide)
	}
	for _, p := range s.Pins {
		w.line("(pin \"%d\" (uuid %s))", p.Num, quote(uuid(sc.key+c.Ref+"/pin/"+fmt.Sprint(p.Num))))
	}
	sc.instances(c.Ref, s.Unit)
	w.close()
}

// instances names the placed symbol in the project: its reference and unit.
func (sc *schematic) instances(ref string, unit int) {
	sc.w.line("(instances (project %s (path %s (reference %s) (unit %d))))", quote(sc.project), quote(sc.path), quote(ref), unit)
}

// footer closes the file, the root's with the sheet instances (those of
// the sheets below it are in their symbols).
func (sc *schematic) footer() {
	w := &sc.w
	w.line("")
	if sc.pg.sheet == nil {
		w.open("(sheet_instances")
		w.line("(path \"/\" (page \"1\"))")
		w.close()
	}
	w.line("(embedded_fonts no)")
	w.close()
}

// sideDir is the outward direction (sheet coordinates) and stub length of
// a pin on the given side.
func sideDir(sd side) (dx, dy, length coord) {
	switch sd {
	case left:
		return -1, 0, stubLen
	case right:
		return 1, 0, stubLen
	case top:
		return 0, -1, pin
	}
	return 0, 1, pin
}

func labelAngle(sd side) (int, string) {
	switch sd {
	case left:
		return 180, "right"
	case top:
		return 90, "left"
	case bottom:
		return 270, "right"
	}
	return 0, "left"
}

// placePower draws a power symbol (a VCC or GND glyph, or a PWR_FLAG) at
// (x, y), its value vx, vy from there.
func (sc *schematic) placePower(id, libID, ref, value string, x, y coord, rot int, vx, vy coord) {
	w := &sc.w
	w.open("(symbol (lib_id %s) (at %v %v %d) (unit 1) (exclude_from_sim no) (in_bom yes) (on_board yes) (dnp no)", quote(libID), x, y, rot)
	w.line("(uuid %s)", quote(uuid(id)))
	w.line("(property \"Reference\" %s (at %v %v 0) %s)", quote(ref), x, y, fontHide)
	// KiCad turns a field with its symbol: angle 90 on a symbol turned by
	// 90 or 270 keeps the name horizontal.
	w.line("(property \"Value\" %s (at %v %v %d) %s)", quote(value), x+vx, y+vy, rot%180, font)
	w.line("(property \"Footprint\" \"\" (at %v %v 0) %s)", x, y, fontHide)
	w.line("(property \"Datasheet\" \"\" (at %v %v 0) %s)", x, y, fontHide)
	w.line("(pin \"1\" (uuid %s))", quote(uuid(id+"/pin")))
	sc.instances(ref, 1)
	w.close()
}

// powerRotation turns a power symbol away from the pin it sits on (KiCad
// rotates counter-clockwise; VCC is drawn pointing up, GND down).
func powerRotation(net string, sd side) int {
	up := map[side]int{top: 0, left: 90, bottom: 180, right: 270}[sd]
	if net == hw.GND {
		return (up + 180) % 360
	}
	return up
}

// powerValueAt places a power symbol's net name beyond its glyph.
func powerValueAt(net string, rot int) (coord, coord) {
	if net == hw.GND {
		rot = (rot + 180) % 360
	}
	switch rot { // direction the glyph points, as for VCC
	case 90:
		return -508, 0
	case 180:
		return 0, 508
	case 270:
		return 508, 0
	}
	return 0, -508
}
