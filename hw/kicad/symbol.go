package kicad

import (
	"strings"

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

// symPin is a pin of a drawn symbol; X and Y (Y up, as in KiCad symbol
// libraries) are its connection point relative to the symbol origin.
type symPin struct {
	hw.Pin
	Name string // shown name (DB-25 pins get their port line's name)
	Side side
	X, Y coord
}

// symbolDef is our drawing of one library part: a rectangle with inputs on
// the left, outputs on the right, supply on top and ground below, every pin
// of the datasheet in one unit so the drawing can be checked pin for pin.
type symbolDef struct {
	LibID  string
	Part   *hw.Part
	Prefix string // reference prefix: "U", "J", ...
	W, H   coord  // body size
	Pins   []symPin
}

// displayLen is the length of a pin or label name as drawn (overbar markup
// ~{...} is not drawn).
func displayLen(s string) int {
	return len(strings.NewReplacer("~{", "", "}", "").Replace(s))
}

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

func pinSide(p *hw.Part, pin hw.Pin) side {
	switch pin.Type {
	case hw.PinPower:
		return top
	case hw.PinGround:
		return bottom
	case hw.PinInput:
		return left
	case hw.PinPassive:
		// Connectors face the board (their labels to the right); two- and
		// three-lead passives put pin 2 (cathode, minus) on the right.
		if strings.HasPrefix(p.Symbol, "Connector") || pin.Num == 2 {
			return right
		}
		return left
	}
	return right // outputs, tri-state outputs, unconnected pins
}

func newSymbol(p *hw.Part, prefix string) *symbolDef {
	s := &symbolDef{LibID: p.Symbol, Part: p, Prefix: prefix}
	var per [4][]symPin
	for _, pin := range p.Pins {
		sd := pinSide(p, pin)
		per[sd] = append(per[sd], symPin{Pin: pin, Name: pinName(p, pin), Side: sd})
	}
	rows := max(len(per[left]), len(per[right]))
	s.H = coord(rows+1) * pin
	nameChars := 0
	for _, sd := range []side{left, right} {
		n := 0
		for _, sp := range per[sd] {
			n = max(n, displayLen(sp.Name))
		}
		nameChars += n
	}
	s.W = roundUp(coord(nameChars)*110+2*pin, pin)
	if p.Logic() {
		s.W = max(s.W, 8*pin) // room for the value text beside the ground pin
	}
	s.W = max(s.W, 2*pin)
	for sd, pins := range per {
		for i := range pins {
			sp := &pins[i]
			switch side(sd) {
			case left:
				sp.X, sp.Y = -s.W/2-pin, s.H/2-coord(i+1)*pin
			case right:
				sp.X, sp.Y = s.W/2+pin, s.H/2-coord(i+1)*pin
			case top:
				sp.X, sp.Y = coord(2*i-(len(pins)-1))*pin, s.H/2+pin
			case bottom:
				sp.X, sp.Y = coord(2*i-(len(pins)-1))*pin, -s.H/2-pin
			}
			s.Pins = append(s.Pins, *sp)
		}
	}
	return s
}

func roundUp(c, step coord) coord { return (c + step - 1) / step * step }

// pinAngle is KiCad's pin orientation: the direction from the connection
// point towards the body.
func pinAngle(sd side) int { return [...]int{0, 180, 270, 90}[sd] }

func kicadPinType(t hw.PinType) string {
	switch t {
	case hw.PinGround, hw.PinPower:
		return "power_in"
	case hw.PinNC:
		return "no_connect"
	}
	return t.String()
}

// libName is the symbol's name without its library: "74LS20".
func libName(libID string) string {
	if i := strings.IndexByte(libID, ':'); i >= 0 {
		return libID[i+1:]
	}
	return libID
}

const font = "(effects (font (size 1.27 1.27)))"
const fontHide = "(effects (font (size 1.27 1.27)) hide)"

func (s *symbolDef) write(w *writer) {
	name := libName(s.LibID)
	pinNames := "(pin_names (offset 1.016))"
	if !hasPinNames(s) {
		pinNames = "(pin_names (offset 1.016) hide)"
	}
	w.open("(symbol %s %s (in_bom yes) (on_board yes)", quote(s.LibID), pinNames)
	w.line("(property \"Reference\" %s (id 0) (at %v %v 0) %s)", quote(s.Prefix), -s.W/2, s.H/2+grid, font)
	w.line("(property \"Value\" %s (id 1) (at %v %v 0) %s)", quote(s.Part.Name), -s.W/2, -s.H/2-grid, font)
	w.line("(property \"Footprint\" %s (id 2) (at 0 0 0) %s)", quote(s.Part.Footprint), fontHide)
	w.line("(property \"Datasheet\" \"\" (id 3) (at 0 0 0) %s)", fontHide)
	w.line("(property \"ki_description\" %s (id 4) (at 0 0 0) %s)", quote(s.Part.Description), fontHide)
	w.open("(symbol %s", quote(name+"_0_1"))
	w.line("(rectangle (start %v %v) (end %v %v) (stroke (width 0.254) (type default) (color 0 0 0 0)) (fill (type background)))", -s.W/2, s.H/2, s.W/2, -s.H/2)
	w.close()
	w.open("(symbol %s", quote(name+"_1_1"))
	for _, p := range s.Pins {
		shown := p.Name
		if shown == "" {
			shown = "~"
		}
		w.line("(pin %s line (at %v %v %d) (length 2.54) (name %s %s) (number \"%d\" %s))",
			kicadPinType(p.Type), p.X, p.Y, pinAngle(p.Side), quote(shown), font, p.Num, font)
	}
	w.close()
	w.close()
}

func hasPinNames(s *symbolDef) bool {
	for _, p := range s.Pins {
		if p.Name != "" && p.Name != "~" {
			return true
		}
	}
	return false
}

// Power symbols: a bar above VCC, a triangle below GND, drawn pointing up
// and down; the single hidden pin at the origin names the net.
func writePowerSymbol(w *writer, net string) {
	w.open("(symbol %s (power) (pin_names (offset 0)) (in_bom yes) (on_board yes)", quote("power:"+net))
	valueY := coord(381)
	shape := "(xy 0 0) (xy 0 1.27) (xy -1.27 1.27) (xy 1.27 1.27)"
	if net == hw.GND {
		valueY = -381
		shape = "(xy 0 0) (xy 0 -1.27) (xy -1.27 -1.27) (xy 0 -2.54) (xy 1.27 -1.27) (xy 0 -1.27)"
	}
	w.line("(property \"Reference\" \"#PWR\" (id 0) (at 0 0 0) %s)", fontHide)
	w.line("(property \"Value\" %s (id 1) (at 0 %v 0) %s)", quote(net), valueY, font)
	w.line("(property \"Footprint\" \"\" (id 2) (at 0 0 0) %s)", fontHide)
	w.line("(property \"Datasheet\" \"\" (id 3) (at 0 0 0) %s)", fontHide)
	w.open("(symbol %s", quote(net+"_0_1"))
	w.line("(polyline (pts %s) (stroke (width 0) (type default) (color 0 0 0 0)) (fill (type none)))", shape)
	w.close()
	w.open("(symbol %s", quote(net+"_1_1"))
	w.line("(pin power_in line (at 0 0 %d) (length 0) hide (name %s %s) (number \"1\" %s))", map[bool]int{true: 270, false: 90}[net == hw.GND], quote(net), font, font)
	w.close()
	w.close()
}

// flagLibID is KiCad's power flag: it marks a net as driven by a supply,
// for the electrical rules check. Its pin is visible, so unlike VCC and
// GND it names no net.
const flagLibID = "power:PWR_FLAG"

func writeFlagSymbol(w *writer) {
	w.open("(symbol %s (power) (pin_numbers hide) (pin_names (offset 0) hide) (in_bom yes) (on_board yes)", quote(flagLibID))
	w.line("(property \"Reference\" \"#FLG\" (id 0) (at 0 1.905 0) %s)", fontHide)
	w.line("(property \"Value\" \"PWR_FLAG\" (id 1) (at 0 3.81 0) %s)", font)
	w.line("(property \"Footprint\" \"\" (id 2) (at 0 0 0) %s)", fontHide)
	w.line("(property \"Datasheet\" \"\" (id 3) (at 0 0 0) %s)", fontHide)
	w.open("(symbol \"PWR_FLAG_0_0\"")
	w.line("(pin power_out line (at 0 0 90) (length 0) (name \"pwr\" %s) (number \"1\" %s))", font, font)
	w.close()
	w.open("(symbol \"PWR_FLAG_0_1\"")
	w.line("(polyline (pts (xy 0 0) (xy 0 1.27) (xy -1.016 1.905) (xy 0 2.54) (xy 1.016 1.905) (xy 0 1.27)) (stroke (width 0) (type default) (color 0 0 0 0)) (fill (type none)))")
	w.close()
	w.close()
}
