package kicad

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/ttlpapers/ttlpapers/hw"
)

// The copper of the DC check: 35 µm (1 oz) outer layers, as the fab note
// orders, and a via's barrel plated 20 µm thick through 1.6 mm of board
// (the least a standard house plates), of copper at 20 °C.
const (
	copperRho     = 1.72e-8 // Ω·m
	copperThick   = 35e-6   // m
	platingThick  = 20e-6   // m
	boardThick    = 1.6e-3  // m
	viaDrillMetre = 0.4e-3  // the routed boards' via hole
)

// LED currents at their most, lit. A status LED's anode is fed from a
// 74LS244 output through 220 Ω: (VOH 3.7 V, the most an LS output gives
// at a few mA, − VF 1.7 V, the least a red or green LED drops) / 220 Ω.
// The power LED hangs on 5 V through 1 kΩ: (5.0 V − VF 2.8 V, a blue
// LED's least) / 1 kΩ.
var ledCurrent = map[*hw.Part]float64{hw.R220: (3.7 - 1.7) / 220, hw.R1k: (5.0 - 2.8) / 1000}

// SupplyDrop is the DC check of a routed board's supply copper: every chip
// drawing its datasheet's maximum supply current (hw.Part.ICC), every LED
// lit (both colours of each bi-colour LED), the supply input held at its
// nominal voltage.
type SupplyDrop struct {
	Supply  string  // the chips' supply net: VCC, or the Pi adapter's +3V3
	Input   float64 // nominal supply voltage at the input, V
	Current float64 // drawn from the input, A
	// Lowest is the chip with the least supply between its supply and
	// ground pins, Volts that supply.
	Lowest string
	Volts  float64
	// Rise is the highest any chip's ground pin stands above the input's
	// ground, V; RiseChip is that chip.
	RiseChip string
	Rise     float64
	// Fuse is what the input's fuse takes of the supply, V: its datasheet
	// resistance at most (R1max) and the copper from the terminal to it,
	// carrying the whole Current; Volts includes it.
	Fuse    float64
	FuseRef string
}

func (d SupplyDrop) String() string {
	s := fmt.Sprintf("%.0f mA; lowest supply %.3f V (%s, %.0f mV below %.2f V", d.Current*1000, d.Volts, d.Lowest, (d.Input-d.Volts)*1000, d.Input)
	if d.FuseRef != "" {
		s += fmt.Sprintf(", %.0f mV of it in fuse %s", d.Fuse*1000, d.FuseRef)
	}
	return s + fmt.Sprintf("); ground rise %.1f mV (%s)", d.Rise*1000, d.RiseChip)
}

// SupplyCheck computes, from a routed board's copper (pads, tracks and
// vias as the board file gives them), the DC voltage every chip of b sees.
// Each supply net's copper is a resistor network: a track of length l and
// width w is ρl/(wt), a via's barrel joins its two layers, and copper that
// overlaps (a track ending in a pad) is one node. The input connector's
// pads hold the supply and ground; each chip draws its ICC at its supply
// pin and returns it at its ground pin, each LED's current is drawn at the
// supply pin of the chip that drives it (the power LED's at its
// resistor) and returned at its cathode.
func SupplyCheck(b *hw.Netlist, pcb []byte) (SupplyDrop, error) {
	root, err := ParseExpr(string(pcb))
	if err != nil {
		return SupplyDrop{}, err
	}
	pads, items, err := copperItems(root)
	if err != nil {
		return SupplyDrop{}, err
	}
	fills, err := zoneFills(root)
	if err != nil {
		return SupplyDrop{}, err
	}
	codes := map[string]int{}
	for _, n := range root.Children("net") {
		var code int
		fmt.Sscan(n.Arg(0), &code)
		codes[n.Arg(1)] = code
	}
	padIndex := map[hw.Node]int{}
	for i, p := range pads {
		var num int
		if _, err := fmt.Sscan(p.Pin, &num); err == nil {
			padIndex[hw.Node{Ref: p.Ref, Pin: num}] = i
		}
	}
	l, err := supplyLoads(b)
	if err != nil {
		return SupplyDrop{}, err
	}
	d := SupplyDrop{Supply: l.supply, Input: l.volts}
	drop := map[string]map[hw.Node]float64{}
	for net, load := range map[string]map[hw.Node]float64{l.supply: l.draw, hw.GND: l.ret} {
		v, err := solveNet(items, fills, codes[netlistName(net)], padIndex, l.input[net], load)
		if err != nil {
			return SupplyDrop{}, fmt.Errorf("kicad: %s's %s copper: %w", b.Name, net, err)
		}
		drop[net] = v
	}
	for _, i := range l.draw {
		d.Current += i
	}
	if f := l.fuse; f != nil {
		v, err := solveNet(items, fills, codes[netlistName(f.net)], padIndex, []hw.Node{f.terminal}, map[hw.Node]float64{f.in: d.Current})
		if err != nil {
			return SupplyDrop{}, fmt.Errorf("kicad: %s's %s copper: %w", b.Name, f.net, err)
		}
		d.FuseRef, d.Fuse = f.in.Ref, v[f.in]+d.Current*f.r
	}
	d.Volts = math.Inf(1)
	for _, c := range l.chips {
		v := l.volts - d.Fuse - drop[l.supply][c.vcc] - drop[hw.GND][c.gnd]
		if v < d.Volts {
			d.Lowest, d.Volts = c.ref, v
		}
		if r := drop[hw.GND][c.gnd]; r > d.Rise || d.RiseChip == "" {
			d.RiseChip, d.Rise = c.ref, r
		}
	}
	return d, nil
}

// loads is where a board's supply current enters and leaves its copper.
type loads struct {
	supply string
	volts  float64
	input  map[string][]hw.Node // per net, the input connector's pins on it
	draw   map[hw.Node]float64  // current drawn from the supply net at each pin, A
	ret    map[hw.Node]float64  // current returned into ground at each pin, A
	chips  []chipPins
	fuse   *inputFuse // nil: the input feeds the supply net directly
}

type chipPins struct {
	ref      string
	vcc, gnd hw.Node
}

// supplyLoads finds b's loads: each chip's supply and ground pins and its
// ICC, each LED's current, and the input connector (the 5 V terminal, or
// the Pi adapter's header, which brings the Pi's 3.3 V).
func supplyLoads(b *hw.Netlist) (*loads, error) {
	l := &loads{input: map[string][]hw.Node{}, draw: map[hw.Node]float64{}, ret: map[hw.Node]float64{}}
	powerPin := map[string]hw.Node{}
	for _, c := range b.Components {
		if !c.Part.Logic() && c.Part != hw.LVC245 {
			continue
		}
		var cp chipPins
		cp.ref = c.Ref
		for _, p := range c.Part.Pins {
			switch p.Type {
			case hw.PinPower:
				cp.vcc = hw.Node{Ref: c.Ref, Pin: p.Num}
			case hw.PinGround:
				cp.gnd = hw.Node{Ref: c.Ref, Pin: p.Num}
			}
		}
		n := b.NetOf(cp.vcc)
		if n == nil || b.NetOf(cp.gnd) == nil || b.NetOf(cp.gnd).Name != hw.GND {
			return nil, fmt.Errorf("kicad: %s's supply pins are not on a supply net and GND", c.Ref)
		}
		if l.supply != "" && n.Name != l.supply {
			return nil, fmt.Errorf("kicad: %s is on supply %s, others on %s", c.Ref, n.Name, l.supply)
		}
		l.supply = n.Name
		l.draw[cp.vcc] += c.Part.ICC
		l.ret[cp.gnd] += c.Part.ICC
		l.chips = append(l.chips, cp)
		powerPin[c.Ref] = cp.vcc
	}
	l.volts = 5.0
	if l.supply == hw.NetPi3V3 {
		l.volts = 3.3
	}
	for _, c := range b.Components {
		switch c.Part {
		case hw.PowerIn, hw.PiHeader40:
			for _, p := range c.Part.Pins {
				node := hw.Node{Ref: c.Ref, Pin: p.Num}
				if n := b.NetOf(node); n != nil && (n.Name == l.supply || n.Name == hw.GND) {
					l.input[n.Name] = append(l.input[n.Name], node)
				}
			}
		case hw.LEDBicolour, hw.LEDBlue:
			if err := l.led(b, c, powerPin); err != nil {
				return nil, err
			}
		}
	}
	if err := l.findFuse(b); err != nil {
		return nil, err
	}
	if len(l.input[l.supply]) == 0 || len(l.input[hw.GND]) == 0 {
		return nil, fmt.Errorf("kicad: %s has no supply input", b.Name)
	}
	return l, nil
}

// led adds LED c's current, each anode lit: drawn where its resistor is
// fed (the supply net, or a chip's output, so that chip's supply pin) and
// returned at its cathode, the pin on GND.
func (l *loads) led(b *hw.Netlist, c *hw.Component, powerPin map[string]hw.Node) error {
	var cathode hw.Node
	var total float64
	for _, p := range c.Part.Pins {
		node := hw.Node{Ref: c.Ref, Pin: p.Num}
		n := b.NetOf(node)
		if n == nil {
			continue
		}
		if n.Name == hw.GND {
			cathode = node
			continue
		}
		fed, i, err := ledFeed(b, n, powerPin, l.supply)
		if err != nil {
			return fmt.Errorf("kicad: %s pin %d: %w", c.Ref, p.Num, err)
		}
		l.draw[fed] += i
		total += i
	}
	if cathode.Ref == "" {
		return fmt.Errorf("kicad: %s has no cathode on GND", c.Ref)
	}
	l.ret[cathode] += total
	return nil
}

// ledFeed follows an LED's anode net through its resistor to the pin the
// current comes from on the supply net, and gives that current.
func ledFeed(b *hw.Netlist, anode *hw.Net, powerPin map[string]hw.Node, supply string) (hw.Node, float64, error) {
	for _, n := range anode.Nodes {
		r := b.Component(n.Ref)
		i, ok := ledCurrent[r.Part]
		if !ok {
			continue
		}
		other := b.NetOf(hw.Node{Ref: n.Ref, Pin: 3 - n.Pin})
		if other == nil {
			break
		}
		if other.Name == supply {
			return hw.Node{Ref: n.Ref, Pin: 3 - n.Pin}, i, nil
		}
		for _, m := range other.Nodes {
			if p, ok := powerPin[m.Ref]; ok {
				return p, i, nil
			}
		}
	}
	return hw.Node{}, 0, fmt.Errorf("anode net %s reaches no resistor fed from the supply or a chip", anode.Name)
}

// solveNet solves one net's copper: the potential, against the input's
// pins (held at 0), of every pin that draws current from the net (a
// positive load) or returns it (the potential then a rise). It returns
// each loaded pin's drop: how far it sits from the input, in volts,
// positive away from the input.
func solveNet(all []copperItem, allFills []zoneFill, code int, padIndex map[hw.Node]int, input []hw.Node, load map[hw.Node]float64) (map[hw.Node]float64, error) {
	var items []copperItem
	for _, it := range all {
		if it.net == code {
			items = append(items, it)
		}
	}
	var fills []zoneFill
	for _, f := range allFills {
		if f.net == code {
			fills = append(fills, f)
		}
	}
	g := copperNetwork(items, fills)
	fixed := map[int]bool{}
	for _, n := range input {
		i, ok := padIndex[n]
		if !ok {
			return nil, fmt.Errorf("no pad %v", n)
		}
		fixed[g.padNode(i)] = true
	}
	inject := map[int]float64{}
	for n, i := range load {
		p, ok := padIndex[n]
		if !ok {
			return nil, fmt.Errorf("no pad %v", n)
		}
		inject[g.padNode(p)] += i
	}
	v, err := g.solve(fixed, inject)
	if err != nil {
		return nil, err
	}
	out := map[hw.Node]float64{}
	for n := range load {
		out[n] = v[g.padNode(padIndex[n])]
	}
	return out, nil
}

// network is copper as nodes joined by conductances.
type network struct {
	parent []int
	edges  []edge
	pad    map[int]int // board pad index -> node
}

type edge struct {
	a, b int
	g    float64 // siemens
}

func (g *network) node() int {
	g.parent = append(g.parent, len(g.parent))
	return len(g.parent) - 1
}

func (g *network) find(i int) int {
	for g.parent[i] != i {
		g.parent[i] = g.parent[g.parent[i]]
		i = g.parent[i]
	}
	return i
}

func (g *network) join(a, b int) { g.parent[g.find(a)] = g.find(b) }

func (g *network) padNode(i int) int { return g.find(g.pad[i]) }

// copperNetwork makes one net's items a network. A pad is one node on
// both layers; a via is a node on each layer, joined through its barrel;
// a track is a chain of resistors between the points where other copper
// meets it (its ends, a pad or via it passes through, another track's
// end on it); zone fills are grids of cells (addZones).
func copperNetwork(items []copperItem, fills []zoneFill) *network {
	g := &network{pad: map[int]int{}}
	nd := g.addItems(items)
	g.meet(items, nd)
	g.addZones(fills, nd.contacts(items))
	g.addTracks(items, nd.along)
	return g
}

// itemNodes are copperNetwork's nodes of each item, by the item's index:
// a pad's or via's node on each layer (onLayer[i][1] F.Cu, [2] B.Cu), a
// track's ends, and the points along a track where other copper meets it
// (nil for anything but a track).
type itemNodes struct {
	onLayer [][3]int
	ends    [][2]int
	along   [][]trackPoint
}

// trackPoint is a point along a track: t from 0 at its start to 1 at its
// end, and the node there.
type trackPoint struct {
	t    float64
	node int
}

func (nd *itemNodes) isTrack(i int) bool { return nd.along[i] != nil }

// addItems makes each item's nodes: a pad one node on both layers, a via
// one on each layer joined through its barrel, a track one at each end.
func (g *network) addItems(items []copperItem) *itemNodes {
	nd := &itemNodes{onLayer: make([][3]int, len(items)), ends: make([][2]int, len(items)), along: make([][]trackPoint, len(items))}
	for i, it := range items {
		switch {
		case it.pad >= 0:
			n := g.node()
			nd.onLayer[i] = [3]int{0, n, n}
			g.pad[it.pad] = n
		case it.x0 == it.x1 && it.y0 == it.y1 && it.layers == allCopper: // a via
			f, b := g.node(), g.node()
			nd.onLayer[i] = [3]int{0, f, b}
			g.edges = append(g.edges, edge{f, b, math.Pi * viaDrillMetre * platingThick / (copperRho * boardThick)})
		default:
			nd.ends[i] = [2]int{g.node(), g.node()}
			nd.along[i] = []trackPoint{{0, nd.ends[i][0]}, {1, nd.ends[i][1]}}
		}
	}
	return nd
}

// meet joins the items whose copper touches: a track's end in a pad or via
// is that pad or via, a track passing through one meets it at the foot of
// its centre, and a track's end on another track is a point along it.
func (g *network) meet(items []copperItem, nd *itemNodes) {
	touching(items, func(i, j int) {
		a, b := i, j
		if !nd.isTrack(a) {
			a, b = b, a
		}
		if !nd.isTrack(a) {
			return // two pads, or a pad and a via: the router leaves none touching
		}
		s, o := items[a], items[b]
		layer := s.layers // a track is on one layer
		if !nd.isTrack(b) {
			// A pad or via: a track end in it is it; a track passing
			// through meets it at its centre's foot.
			n := nd.onLayer[b][layer]
			switch {
			case inside(o, s.x0, s.y0):
				g.join(nd.ends[a][0], n)
			case inside(o, s.x1, s.y1):
				g.join(nd.ends[a][1], n)
			default:
				nd.along[a] = append(nd.along[a], trackPoint{trackT(s, o.x0, o.y0), n})
			}
			return
		}
		// Two tracks: an end of either on the other.
		for k, e := range [][2]float64{{o.x0, o.y0}, {o.x1, o.y1}} {
			if pointSeg(e[0], e[1], s.x0, s.y0, s.x1, s.y1) <= 1e-6 {
				nd.along[a] = append(nd.along[a], trackPoint{trackT(s, e[0], e[1]), nd.ends[b][k]})
			}
		}
		for k, e := range [][2]float64{{s.x0, s.y0}, {s.x1, s.y1}} {
			if pointSeg(e[0], e[1], o.x0, o.y0, o.x1, o.y1) <= 1e-6 {
				nd.along[b] = append(nd.along[b], trackPoint{trackT(o, e[0], e[1]), nd.ends[a][k]})
			}
		}
	})
}

// trackT is where along track s the point (x, y) lies, or its foot on s:
// 0 at s's start, 1 at its end.
func trackT(s copperItem, x, y float64) float64 {
	dx, dy := s.x1-s.x0, s.y1-s.y0
	l := dx*dx + dy*dy
	if l == 0 {
		return 0
	}
	return math.Max(0, math.Min(1, ((x-s.x0)*dx+(y-s.y0)*dy)/l))
}

// inside reports whether point (x, y) lies in item it's copper.
func inside(it copperItem, x, y float64) bool {
	if !it.round {
		return math.Abs(x-it.x0) <= it.w/2+1e-6 && math.Abs(y-it.y0) <= it.h/2+1e-6
	}
	return pointSeg(x, y, it.x0, it.y0, it.x1, it.y1) <= it.w/2+1e-6
}

// contacts are where each item's copper may meet a zone's: a pad's centre
// on both layers, a via's on each, and a track's ends.
func (nd *itemNodes) contacts(items []copperItem) []contact {
	var contacts []contact
	for i, it := range items {
		switch {
		case it.pad >= 0:
			contacts = append(contacts, contact{allCopper, it.x0, it.y0, it.reach(), nd.onLayer[i][1]})
		case !nd.isTrack(i):
			contacts = append(contacts, contact{1, it.x0, it.y0, it.w / 2, nd.onLayer[i][1]}, contact{2, it.x0, it.y0, it.w / 2, nd.onLayer[i][2]})
		default:
			contacts = append(contacts, contact{it.layers, it.x0, it.y0, it.w / 2, nd.ends[i][0]}, contact{it.layers, it.x1, it.y1, it.w / 2, nd.ends[i][1]})
		}
	}
	return contacts
}

// addTracks makes each track a chain of resistors between the points
// along it, in order; points closer than a nanometre are one node.
func (g *network) addTracks(items []copperItem, along [][]trackPoint) {
	for i, pts := range along {
		if pts == nil {
			continue
		}
		s := items[i]
		sort.SliceStable(pts, func(a, b int) bool { return pts[a].t < pts[b].t })
		length := math.Hypot(s.x1-s.x0, s.y1-s.y0) * 1e-3 // m
		for k := 1; k < len(pts); k++ {
			l := (pts[k].t - pts[k-1].t) * length
			if l < 1e-9 {
				g.join(pts[k-1].node, pts[k].node)
				continue
			}
			g.edges = append(g.edges, edge{pts[k-1].node, pts[k].node, s.w * 1e-3 * copperThick / (copperRho * l)})
		}
	}
}

// solve finds the potentials of the network with the fixed nodes at 0 and
// current inject[n] drawn out of node n (a negative, put in): Kirchhoff's
// law at every other node, solved by conjugate gradients preconditioned
// by multigrid (supplyamg.go). It returns each node's potential, negated
// (a positive drop where current is drawn).
func (g *network) solve(fixed map[int]bool, inject map[int]float64) ([]float64, error) {
	n := len(g.parent)
	root, index, reached, live := g.unknowns(fixed)
	rhs := make([]float64, live)
	for node, i := range inject {
		r := root[node]
		if !reached(r) {
			return nil, fmt.Errorf("a loaded pin has no copper to the input")
		}
		if k := index[r]; k >= 0 {
			rhs[k] += i
		}
	}
	out := make([]float64, n)
	if live == 0 {
		return out, nil
	}
	a := laplacian(g.edges, root, index, live)
	h, err := newAMG(a)
	if err != nil {
		return nil, err
	}
	x, err := pcg(a, h, rhs)
	if err != nil {
		return nil, err
	}
	for i := range n {
		if k := index[root[i]]; k >= 0 {
			out[i] = x[k]
		}
	}
	return out, nil
}

// unknowns numbers the nodes whose potential solve must find: each node's
// root, not fixed, with copper to a fixed node (every loaded node must
// have some: reached says which do). index maps a root to its unknown's
// number, -1 for none; live is how many there are.
func (g *network) unknowns(fixed map[int]bool) (root []int, index []int32, reached func(int) bool, live int) {
	n := len(g.parent)
	root = make([]int, n)
	for i := range root {
		root[i] = g.find(i)
	}
	// Join the nodes each edge joins, and mark the groups holding a fixed
	// node.
	group := slices.Clone(root)
	top := func(i int) int {
		for group[i] != i {
			group[i] = group[group[i]]
			i = group[i]
		}
		return i
	}
	for _, e := range g.edges {
		group[top(root[e.a])] = top(root[e.b])
	}
	isFixed := make([]bool, n)
	reach := make([]bool, n)
	for f := range fixed {
		isFixed[root[f]] = true
		reach[top(root[f])] = true
	}
	index = make([]int32, n)
	for i := range n {
		index[i] = -1
		if root[i] == i && !isFixed[i] && reach[top(i)] {
			index[i] = int32(live)
			live++
		}
	}
	return root, index, func(r int) bool { return reach[top(r)] }, live
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
