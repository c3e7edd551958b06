package kicad

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/hw/kicad/route"
)

// Rules are the design rules the boards are routed to and checked
// against (the project file gives them to KiCad's DRC).
var Rules = route.Hobby

// RoutedSizes are the board sizes the generator routes (all of them); a
// size left out would be placed only, for Pcbnew. The Pi adapter is routed
// too.
var RoutedSizes = []int{4, 8, 16, 32}

func routed(b *hw.Netlist) bool {
	return b.Name == hw.PiAdapterName || slices.Contains(RoutedSizes, b.PEs)
}

// PiBase is the file name stem of the Raspberry Pi adapter's files.
const PiBase = "ttl_papers_pi"

// BaseOf is the file name stem of a board's files: Base(b.PEs), or PiBase.
func BaseOf(b *hw.Netlist) string {
	if b.Name == hw.PiAdapterName {
		return PiBase
	}
	return Base(b.PEs)
}

// Routed returns the boards the generator routes: RoutedSizes and the Pi
// adapter.
func Routed() []*hw.Netlist {
	var out []*hw.Netlist
	for _, n := range RoutedSizes {
		out = append(out, hw.MustNew(n))
	}
	pi, err := hw.PiAdapter()
	if err != nil {
		panic(err) // gpiomap.RaspberryPi is fixed and on the header: TestPiAdapter
	}
	return append(out, pi)
}

// absPad is pad p of a placed footprint, in board coordinates.
func absPad(f fpPlaced, p fpPad) (x, y um) {
	if f.Rot == 180 {
		return f.X - p.X, f.Y - p.Y
	}
	return f.X + p.X, f.Y + p.Y
}

// padNet is the KiCad net of a footprint's pad: its hw net, or for a pin
// on no hw net the "unconnected-(…)" net KiCad's schematic gives it;
// mounting holes and the pins the symbol does not draw are on no net.
func padNet(b *hw.Netlist, c *hw.Component, p fpPad) (name string, pin hw.Pin, ok bool) {
	num, err := strconv.Atoi(p.Num)
	if err != nil || num == 0 {
		return "", hw.Pin{}, false
	}
	pin, _ = c.Part.PinByNum(num)
	if n := b.NetOf(hw.Node{Ref: c.Ref, Pin: num}); n != nil {
		return netlistName(n.Name), pin, true
	}
	name, ok = unconnectedNet(c, num)
	return name, pin, ok
}

// routeLayout routes the placed board.
func routeLayout(b *hw.Netlist, l *pcbLayout) (*route.Result, error) {
	rb := route.Placement{X0: int(l.left), Y0: int(l.top), X1: int(l.right), Y1: int(l.bottom)}
	for _, f := range l.fps {
		for _, p := range f.fp.Pads {
			net, _, _ := padNet(b, f.c, p)
			x, y := absPad(f, p)
			rb.Pads = append(rb.Pads, route.Pad{Net: net, X: int(x), Y: int(y), W: int(p.Size), H: int(p.Size),
				Round: p.Shape == "circle", Drill: int(p.Drill)})
		}
	}
	for _, h := range l.holes() {
		rb.Pads = append(rb.Pads, route.Pad{X: int(h[0]), Y: int(h[1]), W: int(2 * holeKeep), H: int(2 * holeKeep), Round: true, Drill: 3200})
	}
	r := Rules
	// The router sees the nets by their KiCad names: the Pi's 3.3 V and
	// the supply before its fuse are label nets, "/+3V3" and "/VIN".
	r.Power = []string{hw.VCC, hw.GND, netlistName(hw.NetPi3V3), netlistName(hw.NetVIn)}
	key := sha256.Sum256(fmt.Appendf(nil, "%v %v", rb, r))
	routes.Lock()
	defer routes.Unlock()
	if res := routes.m[key]; res != nil {
		return res, nil
	}
	res, err := route.Route(rb, r)
	if err != nil {
		return nil, fmt.Errorf("kicad: routing the %s board: %w", b.Name, err)
	}
	routes.m[key] = res
	return res, nil
}

// routes remembers each board's routing by its input: the router is
// deterministic and takes seconds, and a generation (or a test run) asks
// for the same board more than once.
var routes = struct {
	sync.Mutex
	m map[[32]byte]*route.Result
}{m: map[[32]byte]*route.Result{}}

// writeTracks writes the router's tracks and vias, code numbering the
// router's nets.
func writeTracks(w *writer, key string, res *route.Result, code func(net string) int) {
	for i, s := range res.Segments {
		w.line("(segment (start %v %v) (end %v %v) (width %v) (layer %s) (net %d) (tstamp %s))",
			um(s.X0), um(s.Y0), um(s.X1), um(s.Y1), um(s.Width), quote(route.LayerNames[s.Layer]), code(s.Net), uuid(fmt.Sprintf("%spcb/seg%d", key, i)))
	}
	for i, v := range res.Vias {
		w.line("(via (at %v %v) (size %v) (drill %v) (layers \"F.Cu\" \"B.Cu\") (net %d) (tstamp %s))",
			um(v.X), um(v.Y), um(Rules.ViaSize), um(Rules.ViaDrill), code(v.Net), uuid(fmt.Sprintf("%spcb/via%d", key, i)))
	}
}
