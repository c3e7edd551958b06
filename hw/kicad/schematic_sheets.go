package kicad

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ttlpapers/ttlpapers/hw"
)

// sheetPEs is how many PEs one sheet of a hierarchical schematic holds:
// a 74LS30 NANDs 8 PEs' lines, so the first level of every tree sits on
// the sheet with the cables it reads, and leaves the sheet as one net.
const sheetPEs = 8

// hierarchical reports whether a board's schematic is a root sheet with
// one sheet per group of sheetPEs PEs: the boards beyond 8 PEs, whose
// single sheet would be A0 (16 PEs) or 1.7 m wide (32).
func hierarchical(b *hw.Netlist) bool { return b.Name != hw.PiAdapterName && b.PEs > sheetPEs }

// subSheet is one sheet below the root: one group of PEs.
type subSheet struct {
	name  string // the sheet's name, which KiCad puts in its nets' names: "PE0-7"
	file  string // its file, beside the root's
	first int    // its first PE
}

// uuid is the sheet symbol's, which names the sheet's instance in paths.
func (s *subSheet) uuid(key string) string { return uuid(key + "sheet/" + s.name) }

// hierarchy is how a board's schematic divides into sheets; nil for a
// board drawn on one sheet.
type hierarchy struct {
	sheets []*subSheet
	of     map[string]*subSheet // by reference; absent: on the root sheet
	nets   map[string][]*subSheet
}

// newHierarchy puts each part on a sheet by rule. A cable connector goes
// on its PE group's sheet. A part wired (by a net other than the supply)
// to parts of exactly one group goes there too, the groups spreading one
// hop at a time from the connectors: the LED drivers, the multiplexers
// and the first level of the trees, then the LEDs' resistors, then the
// LEDs. A decoupling capacitor goes with its chip. Everything else, parts
// shared by several groups and the power input's, is on the root sheet.
func newHierarchy(b *hw.Netlist) *hierarchy {
	if !hierarchical(b) {
		return nil
	}
	h := &hierarchy{of: map[string]*subSheet{}, nets: map[string][]*subSheet{}}
	for first := 0; first < b.PEs; first += sheetPEs {
		name := fmt.Sprintf("PE%d-%d", first, first+sheetPEs-1)
		h.sheets = append(h.sheets, &subSheet{name: name, file: fmt.Sprintf("pe%d-%d.kicad_sch", first, first+sheetPEs-1), first: first})
	}
	neighbours := map[string][]string{}
	for _, n := range b.Nets {
		if n.Name == hw.VCC || n.Name == hw.GND {
			continue
		}
		for _, a := range n.Nodes {
			for _, c := range n.Nodes {
				if a.Ref != c.Ref {
					neighbours[a.Ref] = append(neighbours[a.Ref], c.Ref)
				}
			}
		}
	}
	groups := map[string]map[int]bool{}
	for k := range b.PEs {
		groups[hw.ConnectorRef(k)] = map[int]bool{k / sheetPEs: true}
	}
	for {
		next := map[string]map[int]bool{}
		for _, c := range b.Components {
			if groups[c.Ref] != nil || c.Decouples != nil {
				continue
			}
			for _, nb := range neighbours[c.Ref] {
				for g := range groups[nb] {
					if next[c.Ref] == nil {
						next[c.Ref] = map[int]bool{}
					}
					next[c.Ref][g] = true
				}
			}
		}
		if len(next) == 0 {
			break
		}
		for ref, g := range next {
			groups[ref] = g
		}
	}
	for _, c := range b.Components {
		ref := c.Ref
		if c.Decouples != nil {
			ref = c.Decouples.Ref
		}
		if g := groups[ref]; len(g) == 1 {
			for i := range g {
				h.of[c.Ref] = h.sheets[i]
			}
		}
	}
	for _, n := range b.Nets {
		seen := map[*subSheet]bool{}
		for _, nd := range n.Nodes {
			if s := h.of[nd.Ref]; !seen[s] {
				seen[s] = true
				h.nets[n.Name] = append(h.nets[n.Name], s)
			}
		}
	}
	return h
}

// sheetOf is the sheet a part is on: nil for the root.
func (h *hierarchy) sheetOf(ref string) *subSheet {
	if h == nil {
		return nil
	}
	return h.of[ref]
}

// local is the sheet below the root that holds every pin of a net, or nil
// when the net reaches the root sheet.
func (h *hierarchy) local(net string) *subSheet {
	if h == nil || net == hw.VCC || net == hw.GND {
		return nil
	}
	if s := h.nets[net]; len(s) == 1 {
		return s[0]
	}
	return nil
}

// crosses reports whether a net leaves sheet s (not the root) through a
// hierarchical label: it has pins on s and elsewhere.
func (h *hierarchy) crosses(net string, s *subSheet) bool {
	return h != nil && s != nil && net != hw.VCC && net != hw.GND && len(h.nets[net]) > 1
}

// netName is the name KiCad gives a hw net: a net whose labels are all on
// one sheet below the root carries that sheet's path ("/PE0-7/PE0.LED_G"),
// any other that of the root (netlistName).
func (h *hierarchy) netName(net string) string {
	if s := h.local(net); s != nil {
		return "/" + s.name + "/" + net
	}
	return netlistName(net)
}

// kicadName is the name KiCad gives a net the router knows by its name on
// a one-sheet schematic (netlistName's, or a pin's "unconnected-(…)"): the
// router sees the same names, and so routes the same, whatever the sheets.
func (h *hierarchy) kicadName(flat string) string {
	if net, ok := strings.CutPrefix(flat, "/"); ok {
		return h.netName(net)
	}
	return flat
}

// subSheets are the sheets below the root; none for a board on one sheet.
func (h *hierarchy) subSheets() []*subSheet {
	if h == nil {
		return nil
	}
	return h.sheets
}

// page is one sheet being laid out: the root (sheet nil) or one below it.
type page struct {
	b     *hw.Netlist
	h     *hierarchy
	sheet *subSheet
}

// holds reports whether a part is drawn on the page.
func (pg *page) holds(c *hw.Component) bool { return pg.h.sheetOf(c.Ref) == pg.sheet }

// subSheets are the sheets whose symbols the page shows: the root's.
func (pg *page) subSheets() []*subSheet {
	if pg.sheet != nil {
		return nil
	}
	return pg.h.subSheets()
}

// sheetsArea holds the root's sheet symbols, after the functional areas.
var sheetsArea = struct{ group, title, sub string }{"sheets", "One sheet per %d PEs", ""}

// sheetPin is a pin of a sheet's symbol: a net that leaves the sheet.
type sheetPin struct {
	net   *hw.Net
	shape string
}

// pins are the pins of a sheet's symbol, one per net it shares with
// another sheet, in the netlist's order.
func (pg *page) pins(sh *subSheet) []sheetPin {
	var out []sheetPin
	for _, n := range pg.b.Nets {
		if pg.h.crosses(n.Name, sh) && slices.Contains(pg.h.nets[n.Name], sh) {
			out = append(out, sheetPin{n, (&page{b: pg.b, h: pg.h, sheet: sh}).shape(n)})
		}
	}
	return out
}

// shape is the shape of a net's hierarchical label on the page, and of
// its sheet's pin: output when a pin on the page drives it, else input.
func (pg *page) shape(n *hw.Net) string {
	for _, nd := range n.Nodes {
		c := pg.b.Component(nd.Ref)
		if !pg.holds(c) {
			continue
		}
		if p, ok := c.Part.PinByNum(nd.Pin); ok && (p.Type == hw.PinOutput || p.Type == hw.PinTriState) {
			return "output"
		}
	}
	return "input"
}

// sheetBox is the size of a sheet's symbol: its pins down its left side,
// their names inside, the sheet's name above and its file's below.
func (pg *page) sheetBox(sh *subSheet) (w, h coord) {
	n := len(sh.file)
	for _, p := range pg.pins(sh) {
		n = max(n, displayLen(p.net.Name)+2)
	}
	return roundUp(coord(n)*labelChar+2*pin, pin), coord(len(pg.pins(sh))+1) * pin
}

// sheetCellSize is the room a sheet's symbol needs with its pins' wires
// and labels to its left; (ox, oy) is its top left corner in the cell.
func (pg *page) sheetCellSize(sh *subSheet) (w, h, ox, oy coord) {
	bw, bh := pg.sheetBox(sh)
	n := 0
	for _, p := range pg.pins(sh) {
		n = max(n, displayLen(p.net.Name))
	}
	ox = roundUp(stubLen+coord(n)*labelChar+pin, pin)
	oy = 2 * pin // the sheet's name above
	return ox + bw + 2*pin, oy + bh + 3*pin, ox, oy
}

// sheetSymbol draws a sheet's symbol at its place, each pin with a short
// wire to a label of its net.
func (sc *schematic) sheetSymbol(pl *placed) {
	w, sh := &sc.w, pl.sh
	bw, bh := sc.pg.sheetBox(sh)
	id := sc.key + "sheet/" + sh.name
	w.open("(sheet (at %v %v) (size %v %v) (exclude_from_sim no) (in_bom yes) (on_board yes) (dnp no)", pl.X, pl.Y, bw, bh)
	w.line("(stroke (width 0.1524) (type solid)) (fill (color 0 0 0 0.0000))")
	w.line("(uuid %s)", quote(sh.uuid(sc.key)))
	w.line("(property \"Sheetname\" %s (at %v %v 0) (effects (font (size 1.27 1.27)) (justify left bottom)))", quote(sh.name), pl.X, pl.Y-grid/2)
	w.line("(property \"Sheetfile\" %s (at %v %v 0) (effects (font (size 1.27 1.27)) (justify left top)))", quote(sh.file), pl.X, pl.Y+bh+grid/2)
	pins := sc.pg.pins(sh)
	for i, p := range pins {
		w.line("(pin %s %s (at %v %v 180) (effects (font (size 1.27 1.27)) (justify left)) (uuid %s))",
			quote(p.net.Name), p.shape, pl.X, pl.Y+coord(i+1)*pin, quote(uuid(id+"/pin/"+p.net.Name)))
	}
	w.line("(instances (project %s (path %s (page %s))))", quote(sc.project), quote(sc.path), quote(fmt.Sprint(sc.pg.h.page(sh))))
	w.close()
	for i, p := range pins {
		y := pl.Y + coord(i+1)*pin
		w.line("(wire (pts (xy %v %v) (xy %v %v)) (stroke (width 0) (type default) (color 0 0 0 0)) (uuid %s))",
			pl.X, y, pl.X-stubLen, y, quote(uuid(id+"/wire/"+p.net.Name)))
		w.line("(label %s (at %v %v 180) (effects (font (size 1.27 1.27)) (justify right bottom)) (uuid %s))",
			quote(p.net.Name), pl.X-stubLen, y, quote(uuid(id+"/label/"+p.net.Name)))
	}
}

// page is a sheet's page number: the root is page 1.
func (h *hierarchy) page(sh *subSheet) int {
	for i, s := range h.sheets {
		if s == sh {
			return i + 2
		}
	}
	return 1
}
