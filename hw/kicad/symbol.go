package kicad

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// side is where a pin leaves a symbol's body.
type side uint8

const (
	left side = iota
	right
	top
	bottom
)

// symPin is a pin of a placed unit; X and Y (Y up, as in KiCad symbol
// libraries) are its connection point relative to the symbol origin.
type symPin struct {
	hw.Pin
	LibName string // the library's name of the pin ("~": none)
	LibType string // the library's electrical type: "input", "tri_state", …
	Side    side
	X, Y    coord
}

// bounds is a rectangle in symbol coordinates (Y up), empty until a point
// is added.
type bounds struct {
	X0, Y0, X1, Y1 coord
	set            bool
}

func (e *bounds) add(x, y coord) {
	if !e.set {
		*e = bounds{x, y, x, y, true}
	}
	e.X0, e.Y0, e.X1, e.Y1 = min(e.X0, x), min(e.Y0, y), max(e.X1, x), max(e.Y1, y)
}

// symbolDef is one unit of a KiCad library symbol (a gate, a chip's supply
// pins, or a whole part), as the sheet places it.
type symbolDef struct {
	LibID string
	Unit  int // 1, 2, ...
	Part  *hw.Part
	Pins  []symPin
	All   bounds // the drawing and the pins' connection points
	// Datasheet and Description are the library symbol's, repeated on
	// each placed symbol as KiCad does.
	Datasheet, Description string
}

// supplyOnly reports whether the unit holds only supply pins: a multi-unit
// chip's power unit.
func (s *symbolDef) supplyOnly() bool {
	for _, p := range s.Pins {
		if p.Type != hw.PinPower && p.Type != hw.PinGround {
			return false
		}
	}
	return true
}

// sideOf is the side of a library pin whose orientation (the direction
// from its connection point towards the body) is angle.
func sideOf(angle int) side {
	switch angle {
	case 180:
		return right
	case 270:
		return top
	case 90:
		return bottom
	}
	return left
}

// unitsOf reads the units of a part's KiCad symbol (body style 1: style 2
// is the De Morgan drawing): their pins, each a pin of the hw part, and
// their extents.
func unitsOf(p *hw.Part) ([]*symbolDef, error) {
	if u, ok := unitCache.Load(p); ok {
		return u.([]*symbolDef), nil
	}
	sym, err := LibSymbol(p.Symbol)
	if err != nil {
		return nil, err
	}
	var subs [][2]int // unit, style of each sub-symbol
	n := 1
	for _, u := range sym.Children("symbol") {
		unit, style, err := unitOf(u.Arg(0))
		if err != nil {
			return nil, err
		}
		subs = append(subs, [2]int{unit, style})
		n = max(n, unit)
	}
	defs := make([]*symbolDef, n)
	for i := range defs {
		d := &symbolDef{LibID: p.Symbol, Unit: i + 1, Part: p,
			Datasheet: libProperty(sym, "Datasheet"), Description: libProperty(sym, "Description")}
		for j, u := range sym.Children("symbol") {
			if unit, style := subs[j][0], subs[j][1]; (unit != 0 && unit != i+1) || style == 2 {
				continue
			}
			if err := d.read(u); err != nil {
				return nil, fmt.Errorf("kicad: %s unit %d: %w", p.Symbol, i+1, err)
			}
		}
		for _, sp := range d.Pins {
			d.All.add(sp.X, sp.Y)
		}
		defs[i] = d
	}
	unitCache.Store(p, defs)
	return defs, nil
}

// unitCache holds each part's units, read once.
var unitCache sync.Map

// read adds a sub-symbol's pins and drawing to the unit.
func (d *symbolDef) read(u *Expr) error {
	for _, item := range u.List[2:] {
		if item.Head() != "pin" {
			graphicExtent(item, &d.All)
			continue
		}
		at, angle, err := readAt(item)
		if err != nil {
			return err
		}
		num, err := strconv.Atoi(item.Child("number").Arg(0))
		if err != nil {
			return fmt.Errorf("pin number %q", item.Child("number").Arg(0))
		}
		hp, ok := d.Part.PinByNum(num)
		if !ok {
			return fmt.Errorf("pin %d is not a pin of hw's %s", num, d.Part.Name)
		}
		d.Pins = append(d.Pins, symPin{Pin: hp, LibName: item.Child("name").Arg(0), LibType: item.Arg(0), Side: sideOf(angle), X: at.X, Y: at.Y})
	}
	return nil
}

// graphicExtent widens e by the points of a drawing item (rectangle,
// polyline, arc, circle).
func graphicExtent(item *Expr, e *bounds) {
	for _, c := range item.List {
		switch c.Head() {
		case "xy", "start", "end", "mid", "center":
			if p, err := readXY(c); err == nil {
				if c.Head() == "center" {
					r, _ := mm(item.Child("radius").Arg(0))
					e.add(p.X-r, p.Y-r)
					e.add(p.X+r, p.Y+r)
				} else {
					e.add(p.X, p.Y)
				}
			}
		case "pts":
			graphicExtent(c, e)
		}
	}
}

// symbols reads the units of every library part the board uses.
func symbols(b *hw.Netlist) (map[string][]*symbolDef, error) {
	syms := map[string][]*symbolDef{}
	for _, c := range b.Components {
		if syms[c.Part.Symbol] != nil {
			continue
		}
		defs, err := unitsOf(c.Part)
		if err != nil {
			return nil, err
		}
		syms[c.Part.Symbol] = defs
	}
	return syms, nil
}

// unconnectedNet is the net KiCad's schematic gives a pin on no net:
// "unconnected-(U3A-~{Q}-Pad6)", named by the reference of the unit
// holding the pin (a letter after it when the symbol has several units)
// and the library's pin name, if it has one. ok is false for a pin the
// symbol does not draw (a chip's NC pins): its pad is on no net.
func unconnectedNet(c *hw.Component, num int) (net string, ok bool) {
	units, err := unitsOf(c.Part)
	if err != nil {
		return "", false
	}
	for _, u := range units {
		for _, p := range u.Pins {
			if p.Num != num {
				continue
			}
			ref := c.Ref
			if len(units) > 1 {
				ref += string(rune('A' + u.Unit - 1))
			}
			if p.LibName == "" || p.LibName == "~" {
				return fmt.Sprintf("unconnected-(%s-Pad%d)", ref, num), true
			}
			return fmt.Sprintf("unconnected-(%s-%s-Pad%d)", ref, p.LibName, num), true
		}
	}
	return "", false
}

// displayLen is the length of a pin or label name as drawn (overbar markup
// ~{...} is not drawn).
func displayLen(s string) int {
	return len(strings.NewReplacer("~{", "", "}", "").Replace(s))
}

// pinName is a pin's function as the netlist and the board name it: the
// datasheet's name, or a DB-25 pin's port line.
func pinName(p *hw.Part, pin hw.Pin) string {
	if p != hw.DB25 && p != hw.DB25Socket && p != hw.IDC26 {
		return pin.Name
	}
	// A cable connector's pins are named by the port line they carry.
	port := func(n int) int {
		if p.CablePin != nil {
			return p.CablePin(n)
		}
		return n
	}
	for _, l := range lpt.Lines {
		if port(l.Pin) == pin.Num {
			return l.Name
		}
	}
	for _, n := range lpt.GroundPins {
		if port(n) == pin.Num {
			return "GND"
		}
	}
	return "" // the IDC header's 26th pin: no DB-25 pin
}

func roundUp(c, step coord) coord { return (c + step - 1) / step * step }

func kicadPinType(t hw.PinType) string {
	switch t {
	case hw.PinGround, hw.PinPower:
		return "power_in"
	case hw.PinNC:
		return "no_connect"
	}
	return t.String()
}

// flagLibID is KiCad's power flag: it marks a net as driven by a supply,
// for the electrical rules check. Its pin is a power output, so unlike
// VCC's and GND's it names no net.
const flagLibID = "power:PWR_FLAG"

const font = "(effects (font (size 1.27 1.27)))"
const fontHide = "(effects (font (size 1.27 1.27)) (hide yes))"
