package kicad

import (
	"crypto/sha1"
	"fmt"
	"maps"
	"slices"
	"sort"
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
// left to right.
var areas = []struct{ group, title string }{
	{"cable", "Cable connectors: one DB-25 per PE"},
	{"barrier", "Barrier: S0/S1 NAND trees and flip-flops"},
	{"interrupt", "Interrupt request and acknowledge trees"},
	{"mux", "Per-PE Busy multiplexers (P_SEL)"},
	{"data", "Data NAND and line drivers"},
	{"led", "Status LEDs: green and red per PE"},
	{"power", "Power input, decoupling, power light"},
	{"host", "Pi header"},      // the Pi adapter's: short titles, as its board is narrow
	{"shift", "3.3 V shifter"}, // board outputs to the Pi's 3.3 V inputs
}

// placed is a component at its place on the sheet (X, Y: symbol origin,
// sheet coordinates, Y down).
type placed struct {
	c    *hw.Component
	sym  *symbolDef
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

// labelWidth is the room a side's labels need.
func labelRoom(b *hw.Board, c *hw.Component, s *symbolDef, sd side) coord {
	n := 0
	for _, p := range s.Pins {
		if p.Side != sd {
			continue
		}
		if net := b.NetOf(hw.Node{Ref: c.Ref, Pin: p.Num}); net != nil {
			n = max(n, displayLen(net.Name))
			if net.Name == hw.VCC || net.Name == hw.GND {
				n = max(n, 5)
			}
		}
	}
	return stubLen + coord(n)*labelChar + pin
}

// cellSize is the room one component needs with its labels; (ox, oy) is the
// symbol origin inside the cell.
func cellSize(b *hw.Board, c *hw.Component, s *symbolDef) (w, h, ox, oy coord) {
	l, r := labelRoom(b, c, s, left), labelRoom(b, c, s, right)
	ox = roundUp(l+s.W/2+pin, pin)
	w = ox + s.W/2 + pin + r + 2*pin
	oy = roundUp(s.H/2+pin+pin+2*pin, pin) // supply stub, power symbol, reference
	h = oy + s.H/2 + pin + pin + 3*pin
	return roundUp(w, pin), roundUp(h, pin), ox, oy
}

// layout places every component on the smallest standard sheet that holds
// them: each area fills columns top to bottom, areas flow left to right in
// rows.
func layout(b *hw.Board, syms map[string]*symbolDef) (paper string, pw, ph coord, out []*area) {
	for _, p := range papers {
		inner, maxW := p.h-2*margin-titleBlock, p.w-2*margin
		for _, colH := range []coord{inner / 3, inner / 2, inner} {
			out = flow(b, syms, colH, maxW)
			w, h := extent(out)
			if w <= p.w-margin && h <= p.h-margin-titleBlock {
				return p.name, p.w, p.h, out
			}
		}
	}
	// Beyond A0: one row, as wide as it needs.
	a0 := papers[len(papers)-1]
	out = flow(b, syms, a0.h-2*margin-titleBlock, 1<<30)
	w, _ := extent(out)
	return "User", roundUp(w+margin, 2540), a0.h, out
}

func extent(as []*area) (w, h coord) {
	for _, a := range as {
		w, h = max(w, a.x+a.w), max(h, a.y+a.h)
	}
	return w, h
}

// flow lays the areas out in rows no wider than maxW.
func flow(b *hw.Board, syms map[string]*symbolDef, colH, maxW coord) []*area {
	var out []*area
	x, y, rowH := margin+pin, margin+pin, coord(0)
	for _, ar := range areas {
		a := layoutArea(b, syms, ar.group, ar.title, colH)
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

// layoutArea places one group's components in columns at most colH high,
// relative to the area's top left corner.
func layoutArea(b *hw.Board, syms map[string]*symbolDef, group, title string, colH coord) *area {
	a := &area{title: title}
	top := 3 * pin
	colX, colW, y := pin, coord(0), top
	for _, c := range b.Components {
		if c.Group != group {
			continue
		}
		s := syms[c.Part.Symbol]
		w, h, ox, oy := cellSize(b, c, s)
		if y+h > colH && y > top {
			colX, colW, y = colX+colW, 0, top
		}
		a.cells = append(a.cells, &placed{c: c, sym: s, X: colX + ox, Y: y + oy})
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

// Schematic renders the board as a KiCad 6 schematic. Every pin of every
// part gets a short wire ending in a net label (named as the hw net) or a
// power symbol; unused inputs and outputs get a no-connect flag.
func Schematic(b *hw.Board) []byte {
	syms := symbols(b)
	paper, pw, ph, as := layout(b, syms)
	sc := &schematic{b: b, key: b.Name + "/", supply: supply(b)}
	sc.header(paper, pw, ph, syms)
	for _, a := range as {
		sc.frame(a)
		for _, pl := range a.cells {
			for _, p := range pl.sym.Pins {
				sc.pinEnd(pl, p)
			}
			sc.symbol(pl)
		}
	}
	sc.footer()
	return []byte(sc.w.b.String())
}

// schematic is a schematic being written.
type schematic struct {
	w          writer
	b          *hw.Board
	key        string   // prefix of every uuid's name
	instances  []string // the symbol_instances entries
	pwr, flags int      // power symbols and PWR_FLAGs placed
	supply     *hw.Component
}

// supply is the part whose pins carry a PWR_FLAG on each supply net:
// KiCad's electrical rules check wants every power input pin driven by a
// power output, and our supplies enter through connector pins, which are
// passive. It is the power input; the Pi adapter, powered through the
// Pi's header, has none, and its flags go on its decoupling capacitor, a
// two-pin part on both supply nets with room around its pins.
func supply(b *hw.Board) *hw.Component {
	var c *hw.Component
	for _, x := range b.Components {
		if x.Part == hw.PowerIn {
			return x
		}
		if c == nil && x.Part == hw.Cap100n {
			c = x
		}
	}
	return c
}

// header opens the file: paper, title block and the library symbols.
func (sc *schematic) header(paper string, pw, ph coord, syms map[string]*symbolDef) {
	w, b := &sc.w, sc.b
	w.open("(kicad_sch (version 20211123) (generator ttlpapers)")
	w.line("")
	w.line("(uuid %s)", uuid(sc.key+"sheet"))
	w.line("")
	if paper == "User" {
		w.line("(paper \"User\" %v %v)", pw, ph)
	} else {
		w.line("(paper %s)", quote(paper))
	}
	w.line("")
	w.open("(title_block")
	w.line("(title %s)", quote(b.Name))
	w.line("(rev %s)", quote(b.Revision))
	w.line("(company \"ttlpapers\")")
	w.line("(comment 1 %s)", quote("Generated from the hw netlist by papersctl kicad: do not edit, regenerate."))
	w.line("(comment 2 %s)", quote("TTL_PAPERS (Dietz, Mattox, Krishnamurthy, Purdue 1995), reconstructed at gate level."))
	w.line("(comment 3 %s)", quote(Notice))
	w.close()
	w.line("")
	w.open("(lib_symbols")
	for _, id := range slices.Sorted(maps.Keys(syms)) {
		syms[id].write(w)
	}
	writePowerSymbol(w, hw.GND)
	writePowerSymbol(w, hw.VCC)
	writeFlagSymbol(w)
	w.close()
	w.line("")
}

// frame draws an area's dashed frame and title. KiCad 6.0 reads a
// sheet-level polyline as one two-point line, so the frame is four of them.
func (sc *schematic) frame(a *area) {
	corners := [5][2]coord{{a.x, a.y}, {a.x + a.w, a.y}, {a.x + a.w, a.y + a.h}, {a.x, a.y + a.h}, {a.x, a.y}}
	for i := range 4 {
		p, q := corners[i], corners[i+1]
		sc.w.line("(polyline (pts (xy %v %v) (xy %v %v)) (stroke (width 0) (type dash) (color 0 0 0 0)) (uuid %s))",
			p[0], p[1], q[0], q[1], uuid(fmt.Sprintf("%sarea/%s/%d", sc.key, a.title, i)))
	}
	sc.w.line("(text %s (at %v %v 0) (effects (font (size 2.54 2.54) bold) (justify left bottom)) (uuid %s))",
		quote(a.title), a.x+pin, a.y+2*pin, uuid(sc.key+"title/"+a.title))
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
			w.line("(no_connect (at %v %v) (uuid %s))", px, py, uuid(id+"/nc"))
		}
		return
	}
	dx, dy, length := sideDir(p.Side)
	ex, ey := px+dx*length, py+dy*length
	w.line("(wire (pts (xy %v %v) (xy %v %v)) (stroke (width 0) (type default) (color 0 0 0 0)) (uuid %s))",
		px, py, ex, ey, uuid(id+"/wire"))
	if net.Name == hw.VCC || net.Name == hw.GND {
		sc.power(id, net.Name, p.Side, ex, ey)
	} else {
		angle, just := labelAngle(p.Side)
		w.line("(label %s (at %v %v %d) (effects (font (size 1.27 1.27)) (justify %s bottom)) (uuid %s))",
			quote(net.Name), ex, ey, angle, just, uuid(id+"/label"))
	}
	if c == sc.supply {
		sc.flag(id, net.Name, ex, ey)
	}
}

// power places the power symbol of net at a wire's end (x, y).
func (sc *schematic) power(id, net string, s side, x, y coord) {
	sc.pwr++
	rot := powerRotation(net, s)
	vx, vy := powerValueAt(net, rot)
	sc.instances = append(sc.instances, placePower(&sc.w, id+"/power", "power:"+net, fmt.Sprintf("#PWR%04d", sc.pwr), net, x, y, rot, vx, vy))
}

// flag places a PWR_FLAG at a wire's end (x, y) on a supply net, pointing
// down, clear of a label's text above the wire; on VCC, the upper pin of
// the power input, up, away from GND's flag below.
func (sc *schematic) flag(id, net string, x, y coord) {
	sc.flags++
	rot, vy := 180, pin+grid
	if net == hw.VCC {
		rot, vy = 0, -pin-grid
	}
	sc.instances = append(sc.instances, placePower(&sc.w, id+"/flag", flagLibID, fmt.Sprintf("#FLG%02d", sc.flags), "PWR_FLAG", x, y, rot, 0, vy))
}

// symbol places a part's symbol with its properties.
func (sc *schematic) symbol(pl *placed) {
	w, c, s := &sc.w, pl.c, pl.sym
	u := uuid(sc.key + c.Ref)
	w.open("(symbol (lib_id %s) (at %v %v 0) (unit 1) (in_bom yes) (on_board yes)", quote(s.LibID), pl.X, pl.Y)
	w.line("(uuid %s)", u)
	w.line("(property \"Reference\" %s (id 0) (at %v %v 0) (effects (font (size 1.27 1.27)) (justify left bottom)))", quote(c.Ref), pl.X-s.W/2, pl.Y-s.H/2-grid/2)
	w.line("(property \"Value\" %s (id 1) (at %v %v 0) (effects (font (size 1.27 1.27)) (justify right top)))", quote(c.Part.Name), pl.X+s.W/2, pl.Y+s.H/2+grid/2)
	w.line("(property \"Footprint\" %s (id 2) (at %v %v 0) %s)", quote(c.Part.Footprint), pl.X, pl.Y, fontHide)
	w.line("(property \"Datasheet\" \"\" (id 3) (at %v %v 0) %s)", pl.X, pl.Y, fontHide)
	w.line("(property \"Role\" %s (id 4) (at %v %v 0) %s)", quote(c.Role), pl.X, pl.Y, fontHide)
	for _, p := range s.Pins {
		w.line("(pin \"%d\" (uuid %s))", p.Num, uuid(sc.key+c.Ref+"/pin/"+fmt.Sprint(p.Num)))
	}
	w.close()
	sc.instances = append(sc.instances, fmt.Sprintf("(path \"/%s\" (reference %s) (unit 1) (value %s) (footprint %s))", u, quote(c.Ref), quote(c.Part.Name), quote(c.Part.Footprint)))
}

// footer closes the file with the sheet and symbol instances.
func (sc *schematic) footer() {
	w := &sc.w
	w.line("")
	w.open("(sheet_instances")
	w.line("(path \"/\" (page \"1\"))")
	w.close()
	w.line("")
	w.open("(symbol_instances")
	sort.Strings(sc.instances)
	for _, in := range sc.instances {
		w.line("%s", in)
	}
	w.close()
	w.close()
}

// symbols draws one symbol per library part the board uses.
func symbols(b *hw.Board) map[string]*symbolDef {
	syms := map[string]*symbolDef{}
	for _, c := range b.Components {
		if syms[c.Part.Symbol] == nil {
			syms[c.Part.Symbol] = newSymbol(c.Part, strings.TrimRight(c.Ref, "0123456789"))
		}
	}
	return syms
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
// (x, y), its value vx, vy from there, and returns its symbol_instances
// entry.
func placePower(w *writer, id, libID, ref, value string, x, y coord, rot int, vx, vy coord) string {
	u := uuid(id)
	w.open("(symbol (lib_id %s) (at %v %v %d) (unit 1) (in_bom yes) (on_board yes)", quote(libID), x, y, rot)
	w.line("(uuid %s)", u)
	w.line("(property \"Reference\" %s (id 0) (at %v %v 0) %s)", quote(ref), x, y, fontHide)
	// KiCad turns a field with its symbol: angle 90 on a symbol turned by
	// 90 or 270 keeps the name horizontal.
	w.line("(property \"Value\" %s (id 1) (at %v %v %d) %s)", quote(value), x+vx, y+vy, rot%180, font)
	w.line("(property \"Footprint\" \"\" (id 2) (at %v %v 0) %s)", x, y, fontHide)
	w.line("(property \"Datasheet\" \"\" (id 3) (at %v %v 0) %s)", x, y, fontHide)
	w.line("(pin \"1\" (uuid %s))", uuid(id+"/pin"))
	w.close()
	return fmt.Sprintf("(path \"/%s\" (reference %s) (unit 1) (value %s) (footprint \"\"))", u, quote(ref), quote(value))
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
