// Package route is a deterministic grid maze router for through-hole
// boards: A* searches on a square grid over one or two copper layers, with
// negotiated rip-up and reroute (PathFinder: nets that share copper are
// torn up and routed again, each time paying more for the contested grid
// cells) until no two nets touch.
//
// The router knows nothing of KiCad or of the TTL_PAPERS circuit: it takes
// pads on nets and design rules, and returns track segments and vias. Same
// input, same output, byte for byte: nothing depends on map order, time or
// floating-point rounding (all lengths are integer micrometres, all costs
// integers).
//
// Clearances hold by construction. Tracks run on grid lines only (no
// diagonals), so two tracks of different nets on neighbouring grid points
// are a grid pitch apart, centre to centre; a grid point is open to a net's
// track only if the track, run to any neighbouring grid point, keeps the
// clearance from every other net's pad; a via claims its grid point and the
// four around it on both layers.
package route

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// Rules are the design rules the router keeps, in micrometres.
type Rules struct {
	Grid          int // routing grid pitch
	Track         int // signal track width
	PowerTrack    int // width of the tracks of the nets Power names
	Clearance     int // copper to copper of different nets
	ViaSize       int // via pad diameter
	ViaDrill      int // via hole diameter
	HoleClearance int // hole edge to hole edge
	EdgeClearance int // copper to board edge
	Layers        int // 1 (B.Cu only) or 2 (F.Cu and B.Cu)
	// Power lists the nets routed with PowerTrack.
	Power []string
	// MaxIterations bounds rip-up and reroute.
	MaxIterations int
	// Jumpers, on a two-layer board, makes it a one-layer board with
	// jumper wires, as the seed's board was: B.Cu is the copper, and F.Cu
	// stands for wires on the component side, so dear that the router uses
	// one only where a net cannot get past the others; each straight F.Cu
	// run is one jumper, its vias the jumper's holes.
	Jumpers bool
}

// Hobby are rules every hobby board house accepts (most take 0.15 mm
// tracks and gaps; these leave margin): 0.25 mm signal tracks, 0.4 mm power
// tracks, 0.2 mm clearance, 0.8 mm vias with 0.4 mm holes, 0.5 mm from the
// board edge, on a 0.635 mm (1/40") grid, so a track passes between two
// DIP pins.
var Hobby = Rules{Grid: 635, Track: 250, PowerTrack: 400, Clearance: 200, ViaSize: 800, ViaDrill: 400,
	HoleClearance: 250, EdgeClearance: 500, Layers: 2, MaxIterations: 60}

// Pad is a through-hole pad: a circle of diameter W, or a W×H rectangle.
type Pad struct {
	Net   string // "" for a pad on no net (a mounting hole): an obstacle
	X, Y  int    // centre
	W, H  int
	Round bool
	Drill int
}

// Placement is what to route: the outline and every pad, placed.
type Placement struct {
	X0, Y0, X1, Y1 int // outline
	Pads           []Pad
}

// Segment is a straight track.
type Segment struct {
	X0, Y0, X1, Y1 int
	Width          int
	Layer          int // 0: F.Cu, 1: B.Cu (a one-layer board uses only B.Cu)
	Net            string
}

// Via joins F.Cu and B.Cu.
type Via struct {
	X, Y int
	Net  string
}

// Result is a routed board.
type Result struct {
	Segments   []Segment
	Vias       []Via
	Iterations int // rip-up and reroute passes
	Length     int // total track length, µm
}

// ErrUnroutable is returned (wrapped, naming the nets) when rip-up and
// reroute cannot separate every net within MaxIterations, or a pad cannot
// be reached at all.
var ErrUnroutable = errors.New("route: board not routable")

// ErrRules is wrapped by the error of rules or an outline no board can be
// routed with (a grid or track of zero, a third layer, an empty outline),
// returned before any routing.
var ErrRules = errors.New("route: rules or outline make no sense")

// Layer names KiCad gives the copper layers, by Segment.Layer.
var LayerNames = [2]string{"F.Cu", "B.Cu"}

// grid is the routing graph: nodes are (layer, column, row).
type grid struct {
	r        Rules
	nx, ny   int
	x0, y0   int
	layers   int
	cells    int        // nx*ny
	block    [2][]int32 // per width class: 0 open, net+1 only for that net, -1 closed
	viaBlock []int32
	occ      []uint16 // nets using each node
	hist     []int32  // history cost of each node
	// search scratch
	cost     []int32
	from     []int32
	stamp    []uint32
	seen     uint32
	isTarget []uint32 // per cell: == target when an end of the search
	target   uint32
	// the targets' bounding box, in columns and rows, which estimate
	// measures to
	tx0, ty0, tx1, ty1 int
	heap               nodeHeap
}

type net struct {
	name   string
	id     int32 // index+1 into nets; block values use it
	class  int   // 0 signal, 1 power
	pads   []int // indexes into Placement.Pads
	claims []int32
	paths  [][]int32
	// access[k] are the grid cells of pad pads[k] a track may end on.
	access [][]int32
}

const (
	stepCost = 10  // one grid step along the layer's preferred direction
	turnCost = 20  // one grid step across it
	viaCost  = 120 // a via
	// With Rules.Jumpers: a jumper's hole, and a grid step of its wire.
	jumperEnd  = 2000
	jumperStep = 40
)

// Route routes every net of b with rules r.
func Route(b Placement, r Rules) (*Result, error) {
	if r.Grid <= 0 || r.Track <= 0 || r.Layers < 1 || r.Layers > 2 || b.X1 <= b.X0 || b.Y1 <= b.Y0 {
		return nil, fmt.Errorf("%w: rules %+v, outline (%d,%d)-(%d,%d): give a positive grid and track width, 1 or 2 layers, and a non-empty outline", ErrRules, r, b.X0, b.Y0, b.X1, b.Y1)
	}
	g := newGrid(b, r)
	nets := collectNets(b, r)
	g.obstacles(b, nets)
	for _, n := range nets {
		if err := g.access(b, n); err != nil {
			return nil, err
		}
	}

	pres := int32(8) // present-congestion factor, sixteenths
	res := &Result{}
	todo := nets
	for it := 1; ; it++ {
		res.Iterations = it
		for _, n := range todo {
			g.ripUp(n)
			if err := g.routeNet(b, n, pres); err != nil {
				return nil, err
			}
		}
		over := g.overused(nets)
		if len(over) == 0 {
			break
		}
		if it >= r.MaxIterations {
			var names []string
			for _, n := range over {
				names = append(names, n.name)
			}
			return nil, fmt.Errorf("%w: after %d passes of rip-up and reroute, nets %v still share copper (spread the parts or allow more passes)", ErrUnroutable, it, names)
		}
		g.addHistory(pres)
		pres = min(pres*3/2+1, 1<<14)
		todo = over
	}
	for _, n := range nets {
		g.emit(b, n, res)
	}
	return res, nil
}

// newGrid is the empty routing graph over b's outline, on r's grid and
// layers, with its search's scratch.
func newGrid(b Placement, r Rules) *grid {
	g := &grid{r: r, x0: b.X0, y0: b.Y0, layers: r.Layers}
	g.nx, g.ny = (b.X1-b.X0)/r.Grid+1, (b.Y1-b.Y0)/r.Grid+1
	g.cells = g.nx * g.ny
	nodes := g.cells * g.layers
	g.occ, g.hist = make([]uint16, nodes), make([]int32, nodes)
	g.cost, g.from, g.stamp = make([]int32, nodes), make([]int32, nodes), make([]uint32, nodes)
	g.isTarget = make([]uint32, g.cells)
	return g
}

// addHistory makes every node more than one net holds dearer for the
// passes to come. History grows with the present factor pres, so that
// once sharing anywhere costs the capped maximum, a point contested pass
// after pass still grows dearer than a fresh one: the losing net moves
// the conflict on to a net that can give way, instead of the same two
// nets trading the same point for ever (with a fixed history step the
// 16-PE board stalled so at 3 points).
func (g *grid) addHistory(pres int32) {
	for i, o := range g.occ {
		if o > 1 {
			g.hist[i] += int32(o-1) * (4 + pres/8)
		}
	}
}

// collectNets lists the nets with two or more pads, in name order.
func collectNets(b Placement, r Rules) []*net {
	byName := map[string]*net{}
	var names []string
	for i, p := range b.Pads {
		if p.Net == "" {
			continue
		}
		n := byName[p.Net]
		if n == nil {
			n = &net{name: p.Net}
			for _, pw := range r.Power {
				if pw == p.Net {
					n.class = 1
				}
			}
			byName[p.Net] = n
			names = append(names, p.Net)
		}
		n.pads = append(n.pads, i)
	}
	sort.Strings(names)
	var nets []*net
	for _, name := range names {
		if n := byName[name]; len(n.pads) > 1 {
			n.id = int32(len(nets) + 1)
			nets = append(nets, n)
		}
	}
	return nets
}

func (g *grid) width(class int) int {
	if class == 1 {
		return g.r.PowerTrack
	}
	return g.r.Track
}

// padDist is the distance from (x, y) to pad p's copper.
func padDist(p Pad, x, y int) float64 {
	dx, dy := float64(abs(x-p.X)), float64(abs(y-p.Y))
	if p.Round {
		return math.Max(0, math.Hypot(dx, dy)-float64(p.W)/2)
	}
	dx, dy = math.Max(0, dx-float64(p.W)/2), math.Max(0, dy-float64(p.H)/2)
	return math.Hypot(dx, dy)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// mark records that the cell is within reach of net id's copper: open to
// that net only, or closed when another net reaches it too.
func mark(m []int32, cell int, id int32) {
	switch m[cell] {
	case 0:
		m[cell] = id
	case id:
	default:
		m[cell] = -1
	}
}

// obstacles fills the block maps from the pads and the board edge. A track
// centred on an open cell and run to a neighbouring open cell keeps the
// clearance: for a point obstacle at distance ≥ d from both ends of a
// segment of length grid, the segment's nearest point is ≥ √(d²−grid²/4)
// away (true of axis-aligned rectangles too, for axis-aligned segments).
func (g *grid) obstacles(b Placement, nets []*net) {
	ids := map[string]int32{}
	for _, n := range nets {
		ids[n.name] = n.id
	}
	// Single-pad nets still own their pad's surroundings.
	next := int32(len(nets) + 1)
	for _, p := range b.Pads {
		if _, ok := ids[p.Net]; !ok && p.Net != "" {
			ids[p.Net] = next
			next++
		}
	}
	half := float64(g.r.Grid) / 2
	for c := 0; c < 2; c++ {
		g.block[c] = make([]int32, g.cells)
		w := float64(g.width(c)) / 2
		need := math.Sqrt(math.Pow(float64(g.r.Clearance)+w, 2) + half*half)
		edge := float64(g.r.EdgeClearance) + w
		for _, p := range b.Pads {
			id := int32(-1)
			if p.Net != "" {
				id = ids[p.Net]
			}
			g.around(p, need, func(cell int) { mark(g.block[c], cell, id) })
		}
		g.edge(g.block[c], edge)
	}
	g.viaBlock = make([]int32, g.cells)
	vr := float64(g.r.ViaSize) / 2
	for _, p := range b.Pads {
		// No via near any pad: copper clearance to other nets, hole
		// clearance to its own.
		need := math.Max(float64(g.r.Clearance)+vr, float64(g.r.HoleClearance+g.r.ViaDrill/2+p.Drill/2)-float64(min(p.W, p.H))/2)
		g.around(p, need, func(cell int) { g.viaBlock[cell] = -1 })
	}
	g.edge(g.viaBlock, float64(g.r.EdgeClearance)+vr)
}

// around calls f for every cell nearer than d to pad p's copper.
func (g *grid) around(p Pad, d float64, f func(cell int)) {
	reach := int(d) + max(p.W, p.H)/2 + g.r.Grid
	i0, i1 := g.col(p.X-reach), g.col(p.X+reach)
	j0, j1 := g.row(p.Y-reach), g.row(p.Y+reach)
	for j := j0; j <= j1; j++ {
		for i := i0; i <= i1; i++ {
			if padDist(p, g.x0+i*g.r.Grid, g.y0+j*g.r.Grid) < d {
				f(j*g.nx + i)
			}
		}
	}
}

func (g *grid) col(x int) int { return min(max((x-g.x0)/g.r.Grid, 0), g.nx-1) }
func (g *grid) row(y int) int { return min(max((y-g.y0)/g.r.Grid, 0), g.ny-1) }

// edge closes the cells nearer than d to the outline (which runs through
// the first and last cell's outer side at x0, y0 and the far edges).
func (g *grid) edge(m []int32, d float64) {
	x1, y1 := g.x0+(g.nx-1)*g.r.Grid, g.y0+(g.ny-1)*g.r.Grid
	for j := 0; j < g.ny; j++ {
		for i := 0; i < g.nx; i++ {
			x, y := g.x0+i*g.r.Grid, g.y0+j*g.r.Grid
			if float64(min(x-g.x0, y-g.y0, x1-x, y1-y)) < d {
				m[j*g.nx+i] = -1
			}
		}
	}
}

// access finds, for each pad of n, the cells a track may end on: inside the
// pad's copper with its whole width, and open to the net.
func (g *grid) access(b Placement, n *net) error {
	w := g.width(n.class)
	for _, pi := range n.pads {
		p := b.Pads[pi]
		var cells []int32
		lim := float64(min(p.W, p.H)-w) / 2
		g.around(p, 1, func(cell int) {
			x, y := g.x0+(cell%g.nx)*g.r.Grid, g.y0+(cell/g.nx)*g.r.Grid
			if math.Hypot(float64(x-p.X), float64(y-p.Y)) <= lim && g.open(n, cell) {
				cells = append(cells, int32(cell))
			}
		})
		if len(cells) == 0 {
			return fmt.Errorf("%w: no grid point inside pad at (%d, %d) µm of net %s is clear of other nets: move the part onto the %d µm grid", ErrUnroutable, p.X, p.Y, n.name, g.r.Grid)
		}
		n.access = append(n.access, cells)
	}
	return nil
}

func (g *grid) open(n *net, cell int) bool {
	v := g.block[n.class][cell]
	return v == 0 || v == n.id
}

func (g *grid) viaOpen(cell int) bool { return g.viaBlock[cell] == 0 }

// viaClaims are the nodes a via at cell holds: its cell and the four
// around it, on every layer.
func (g *grid) viaClaims(cell int, f func(node int)) {
	i, j := cell%g.nx, cell/g.nx
	for l := 0; l < g.layers; l++ {
		base := l * g.cells
		f(base + cell)
		if i > 0 {
			f(base + cell - 1)
		}
		if i < g.nx-1 {
			f(base + cell + 1)
		}
		if j > 0 {
			f(base + cell - g.nx)
		}
		if j < g.ny-1 {
			f(base + cell + g.nx)
		}
	}
}

func (g *grid) ripUp(n *net) {
	for _, nd := range n.claims {
		g.occ[nd]--
	}
	n.claims, n.paths = n.claims[:0], nil
}

// claim records the nodes n's paths hold, each once.
func (g *grid) claim(n *net) {
	g.seen++
	add := func(nd int) {
		if g.stamp[nd] != g.seen {
			g.stamp[nd] = g.seen
			n.claims = append(n.claims, int32(nd))
			g.occ[nd]++
		}
	}
	for _, p := range n.paths {
		for k, nd := range p {
			add(int(nd))
			if k > 0 && int(p[k-1])%g.cells == int(nd)%g.cells {
				g.viaClaims(int(nd)%g.cells, add)
			}
		}
	}
}

// overused returns the nets holding a node another net holds too.
func (g *grid) overused(nets []*net) []*net {
	var out []*net
	for _, n := range nets {
		for _, nd := range n.claims {
			if g.occ[nd] > 1 {
				out = append(out, n)
				break
			}
		}
	}
	return out
}

// nodeCost is what entering node nd costs net n beyond the step itself.
func (g *grid) congestion(nd int, pres int32) int32 {
	return g.hist[nd] + int32(g.occ[nd])*pres
}

// routeNet connects n's pads as a tree: from the first pad, repeatedly
// the cheapest path from the tree to the unconnected pad nearest to it.
func (g *grid) routeNet(b Placement, n *net, pres int32) error {
	inTree := make([]bool, len(n.pads))
	var tree []int32
	addPad := func(k int) {
		inTree[k] = true
		for _, c := range n.access[k] {
			for l := 0; l < g.layers; l++ {
				tree = append(tree, int32(l*g.cells)+c)
			}
		}
	}
	addPad(0)
	for left := len(n.pads) - 1; left > 0; left-- {
		k := nearest(b, n, inTree)
		path := g.search(n, tree, k, pres)
		if path == nil {
			return fmt.Errorf("%w: net %s: no way from its connected pads to the pad at (%d, %d) µm (the board is walled off there: spread the parts)", ErrUnroutable, n.name, b.Pads[n.pads[k]].X, b.Pads[n.pads[k]].Y)
		}
		n.paths = append(n.paths, path)
		tree = append(tree, path...)
		addPad(k)
	}
	g.claim(n)
	return nil
}

// nearest is the pad not in the tree nearest (Manhattan) to a pad in it,
// the first such in pad order.
func nearest(b Placement, n *net, inTree []bool) int {
	best, bestD := -1, math.MaxInt
	for k, in := range inTree {
		if in {
			continue
		}
		p := b.Pads[n.pads[k]]
		for t, tin := range inTree {
			if !tin {
				continue
			}
			q := b.Pads[n.pads[t]]
			if d := abs(p.X-q.X) + abs(p.Y-q.Y); d < bestD {
				best, bestD = k, d
			}
		}
	}
	return best
}

// search is A* from every node of the tree to an access cell of pad k; it
// returns the path, tree end first.
func (g *grid) search(n *net, tree []int32, k int, pres int32) []int32 {
	g.seen++
	g.markTargets(n.access[k])
	g.heap = g.heap[:0]
	for _, nd := range tree {
		if g.stamp[nd] == g.seen {
			continue
		}
		g.stamp[nd], g.cost[nd], g.from[nd] = g.seen, 0, -1
		g.heap.push(mkItem(g.estimate(int(nd)%g.cells), nd))
	}
	for len(g.heap) > 0 {
		it := g.heap.pop()
		nd := int(it.node())
		cell := nd % g.cells
		if it.f() != g.cost[nd]+g.estimate(cell) {
			continue // stale
		}
		if g.isTarget[cell] == g.target {
			return g.path(nd)
		}
		g.expand(n, nd, pres)
	}
	return nil
}

// markTargets makes cells the ends of the next search, and their bounding
// box what estimate measures to.
func (g *grid) markTargets(cells []int32) {
	g.target++
	g.tx0, g.ty0, g.tx1, g.ty1 = g.nx, g.ny, -1, -1
	for _, c := range cells {
		g.isTarget[c] = g.target
		i, j := int(c)%g.nx, int(c)/g.nx
		g.tx0, g.ty0, g.tx1, g.ty1 = min(g.tx0, i), min(g.ty0, j), max(g.tx1, i), max(g.ty1, j)
	}
}

// estimate is A*'s lower bound on the cost from cell to a target: the
// steps to the targets' bounding box, each at the cheapest step's cost.
func (g *grid) estimate(cell int) int32 {
	i, j := cell%g.nx, cell/g.nx
	dx := max(g.tx0-i, 0, i-g.tx1)
	dy := max(g.ty0-j, 0, j-g.ty1)
	return int32(dx+dy) * stepCost
}

// path follows the search back from node nd to the tree, and returns the
// way, tree end first.
func (g *grid) path(nd int) []int32 {
	var path []int32
	for x := int32(nd); x >= 0; x = g.from[x] {
		path = append(path, x)
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return path
}

// expand offers the search each step from node nd: to the four
// neighbours on its layer, at the layer's costs, and through a via to the
// other layer, at the via's cost and the congestion of the nodes it claims.
func (g *grid) expand(n *net, nd int, pres int32) {
	cell, l := nd%g.cells, nd/g.cells
	i, j := cell%g.nx, cell/g.nx
	// Layer 0 (F.Cu) prefers horizontal runs, layer 1 vertical; a
	// one-layer board has no preference.
	hc, vc := int32(stepCost), int32(stepCost)
	switch {
	case g.r.Jumpers && l == 0:
		hc, vc = jumperStep, jumperStep
	case g.r.Jumpers:
	case l == 0:
		vc = turnCost
	default:
		hc = turnCost
	}
	if i > 0 {
		g.relax(n, nd, nd-1, hc, pres)
	}
	if i < g.nx-1 {
		g.relax(n, nd, nd+1, hc, pres)
	}
	if j > 0 {
		g.relax(n, nd, nd-g.nx, vc, pres)
	}
	if j < g.ny-1 {
		g.relax(n, nd, nd+g.nx, vc, pres)
	}
	if g.layers == 2 && g.viaOpen(cell) {
		var extra int32
		g.viaClaims(cell, func(x int) {
			if x != nd {
				extra += g.congestion(x, pres)
			}
		})
		cost := int32(viaCost)
		if g.r.Jumpers {
			cost = jumperEnd
		}
		g.relax(n, nd, (1-l)*g.cells+cell, cost+extra, pres)
	}
}

// relax queues node next, reached from nd by a step costing step, when it
// is open to n and this way is cheaper than any found before.
func (g *grid) relax(n *net, nd, next int, step, pres int32) {
	if !g.open(n, next%g.cells) {
		return
	}
	nc := g.cost[nd] + step + g.congestion(next, pres)
	if g.stamp[next] == g.seen && g.cost[next] <= nc {
		return
	}
	g.stamp[next], g.cost[next], g.from[next] = g.seen, nc, int32(nd)
	g.heap.push(mkItem(nc+g.estimate(next%g.cells), int32(next)))
}

// emit turns n's paths into segments and vias: straight runs merged, split
// where another path joins (so every joint is at segment ends), and a stub
// from each pad's centre to the grid point the track ends on.
func (g *grid) emit(b Placement, n *net, res *Result) {
	joint := map[int32]bool{}
	for _, p := range n.paths {
		joint[p[0]], joint[p[len(p)-1]] = true, true
	}
	w := g.width(n.class)
	seg := func(a, b int32) {
		x0, y0 := g.xy(a)
		x1, y1 := g.xy(b)
		if x0 != x1 || y0 != y1 {
			res.Segments = append(res.Segments, Segment{x0, y0, x1, y1, w, g.layerOf(a), n.name})
			res.Length += abs(x1-x0) + abs(y1-y0)
		}
	}
	vias := map[int32]bool{}
	for _, p := range n.paths {
		start := p[0]
		for k := 1; k < len(p); k++ {
			prev, cur := p[k-1], p[k]
			if int(prev)%g.cells == int(cur)%g.cells { // via
				seg(start, prev)
				c := int32(int(cur) % g.cells)
				if !vias[c] {
					vias[c] = true
					x, y := g.xy(cur)
					res.Vias = append(res.Vias, Via{x, y, n.name})
				}
				start = cur
				continue
			}
			last := k == len(p)-1
			turn := !last && int(p[k+1])%g.cells != int(cur)%g.cells && p[k+1]-cur != cur-prev
			if last || turn || joint[cur] {
				seg(start, cur)
				start = cur
			}
		}
	}
	g.emitStubs(b, n, res)
}

// emitStubs joins every path end on a pad's grid point to the pad's
// centre, which is seldom on the grid.
func (g *grid) emitStubs(b Placement, n *net, res *Result) {
	w := g.width(n.class)
	for k, cells := range n.access {
		p := b.Pads[n.pads[k]]
		for _, path := range n.paths {
			for _, end := range []int32{path[0], path[len(path)-1]} {
				for _, c := range cells {
					x, y := g.xy(end)
					if int32(int(end)%g.cells) == c && (x != p.X || y != p.Y) {
						res.Segments = append(res.Segments, Segment{p.X, p.Y, x, y, w, g.layerOf(end), n.name})
					}
				}
			}
		}
	}
}

// layerOf is node nd's copper layer, as Segment.Layer numbers it.
func (g *grid) layerOf(nd int32) int {
	if g.layers == 1 {
		return 1
	}
	return int(nd) / g.cells
}

// xy is node nd's grid point, µm.
func (g *grid) xy(nd int32) (int, int) {
	c := int(nd) % g.cells
	return g.x0 + (c%g.nx)*g.r.Grid, g.y0 + (c/g.nx)*g.r.Grid
}

// item is a search entry: f in the high half, the node in the low, so
// that comparing items orders by f and breaks ties by node index, and the
// search order never depends on anything but the input.
type item uint64

func mkItem(f int32, node int32) item { return item(uint64(f)<<32 | uint64(uint32(node))) }
func (it item) f() int32              { return int32(it >> 32) }
func (it item) node() int32           { return int32(uint32(it)) }

// nodeHeap is a binary min-heap of items.
type nodeHeap []item

func (h *nodeHeap) push(it item) {
	*h = append(*h, it)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if s[i] >= s[p] {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *nodeHeap) pop() item {
	s := *h
	top := s[0]
	last := len(s) - 1
	x := s[last]
	s = s[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= len(s) {
			break
		}
		if r := l + 1; r < len(s) && s[r] < s[l] {
			l = r
		}
		if x <= s[l] {
			break
		}
		s[i] = s[l]
		i = l
	}
	if len(s) > 0 {
		s[i] = x
	}
	*h = s
	return top
}
