package kicad

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSupplyNetworkOhm solves copper whose resistance is known by hand: a
// 0.4 mm track from pad A to pad B, 10 mm, with a 5 mm branch from its
// middle (another track's end on it, no pad there) to pad C, and a
// second path from A through a via to pad D on the other layer.
func TestSupplyNetworkOhm(t *testing.T) {
	pad := func(i int, x, y float64) copperItem {
		return copperItem{layers: allCopper, pad: i, round: true, x0: x, y0: y, x1: x, y1: y, w: 1.6, h: 1.6}
	}
	track := func(layer int, x0, y0, x1, y1 float64) copperItem {
		return copperItem{layers: layer, pad: -1, round: true, x0: x0, y0: y0, x1: x1, y1: y1, w: 0.4, h: 0.4}
	}
	items := []copperItem{
		pad(0, 0, 0), pad(1, 10, 0), pad(2, 5, 5), pad(3, 0, 20),
		track(1, 0, 0, 10, 0), track(1, 5, 0, 5, 5),
		track(1, 0, 0, 0, 10), {layers: allCopper, pad: -1, round: true, x0: 0, y0: 10, x1: 0, y1: 10, w: 0.8, h: 0.8}, track(2, 0, 10, 0, 20),
	}
	g := copperNetwork(items, nil)
	v, err := g.solve(map[int]bool{g.padNode(0): true}, map[int]float64{g.padNode(1): 1, g.padNode(2): 1, g.padNode(3): 0.5})
	if err != nil {
		t.Fatal(err)
	}
	perMM := copperRho * 1e-3 / (0.4e-3 * copperThick) // Ω per mm of 0.4 mm track
	via := copperRho * boardThick / (math.Pi * viaDrillMetre * platingThick)
	for _, c := range []struct {
		pad  int
		want float64
	}{
		{1, 5*perMM*2 + 5*perMM},    // 2 A over the first half, 1 A over the second
		{2, 5*perMM*2 + 5*perMM},    // the same, the branch instead
		{3, 0.5 * (20*perMM + via)}, // 0.5 A down the other path
	} {
		if got := v[g.padNode(c.pad)]; math.Abs(got-c.want) > 1e-9 {
			t.Errorf("pad %d: %.6f mV, want %.6f mV", c.pad, got*1000, c.want*1000)
		}
	}
	// A pad with no copper to the input is an error, not a zero.
	items = append(items, pad(4, 50, 50))
	g = copperNetwork(items, nil)
	if _, err := g.solve(map[int]bool{g.padNode(0): true}, map[int]float64{g.padNode(4): 1}); err == nil {
		t.Error("a pad with no copper to the input solved")
	}
}

// TestSupplyNetworkZone measures a zone's fill against a track of its
// shape: a strip of fill 100 × 2 mm between two pads conducts as a 2 mm
// track does (a little better: the pads take in the cells they reach),
// and cut across it conducts nothing.
func TestSupplyNetworkZone(t *testing.T) {
	pads := []copperItem{
		{layers: allCopper, pad: 0, round: true, x0: 0, y0: 0, x1: 0, y1: 0, w: 1.6, h: 1.6},
		{layers: allCopper, pad: 1, round: true, x0: 100, y0: 0, x1: 100, y1: 0, w: 1.6, h: 1.6},
	}
	drop := func(items []copperItem, fills []zoneFill) (float64, error) {
		g := copperNetwork(items, fills)
		v, err := g.solve(map[int]bool{g.padNode(0): true}, map[int]float64{g.padNode(1): 1})
		if err != nil {
			return 0, err
		}
		return v[g.padNode(1)], nil
	}
	track, err := drop(append(slices.Clone(pads), copperItem{layers: 1, pad: -1, round: true, x1: 100, w: 2, h: 2}), nil)
	if err != nil {
		t.Fatal(err)
	}
	strip := zoneFill{layer: 1, pts: [][2]float64{{0, -1}, {100, -1}, {100, 1}, {0, 1}}}
	zone, err := drop(pads, []zoneFill{strip})
	if err != nil {
		t.Fatal(err)
	}
	if r := zone / track; r < 0.95 || r > 1 {
		t.Errorf("the strip of fill conducts %.3f mΩ, a 2 mm track of its length %.3f mΩ", zone*1000, track*1000)
	}
	cut := []zoneFill{
		{layer: 1, pts: [][2]float64{{0, -1}, {49, -1}, {49, 1}, {0, 1}}},
		{layer: 1, pts: [][2]float64{{51, -1}, {100, -1}, {100, 1}, {51, 1}}},
	}
	if _, err := drop(pads, cut); err == nil {
		t.Error("a strip of fill cut across still joins its ends")
	}
	// On the other layer the pads, through holes, still meet it.
	strip.layer = 2
	if back, err := drop(pads, []zoneFill{strip}); err != nil || math.Abs(back-zone) > 1e-9 {
		t.Errorf("the strip on B.Cu conducts %v mΩ (%v), on F.Cu %.3f mΩ", back*1000, err, zone*1000)
	}
}

// TestSupplyNetworkDisc solves a plate whose resistance is known in closed
// form: a disc of fill 30 mm in radius, fed at its centre by a 1.6 mm pad
// and held at its rim by a ring of pads, conducts ln(b/a)/(2π·t/ρ) from a
// to b. The grid joins each pad to the cells within its radius and a
// cell more, so the inner radius a lies between 0.8 and 1.05 mm and the
// outer b between 28.95 and 30 mm.
func TestSupplyNetworkDisc(t *testing.T) {
	const b = 30.0
	pad := func(i int, x, y float64) copperItem {
		return copperItem{layers: allCopper, pad: i, round: true, x0: x, y0: y, x1: x, y1: y, w: 1.6, h: 1.6}
	}
	items := []copperItem{pad(0, 0, 0)}
	var disc zoneFill
	disc.layer = 1
	for k := range 360 {
		s, c := math.Sincos(float64(k) * math.Pi / 180)
		disc.pts = append(disc.pts, [2]float64{b * c, b * s})
	}
	rim := int(math.Ceil(2 * math.Pi * b)) // a pad every mm or less
	for k := range rim {
		s, c := math.Sincos(2 * math.Pi * float64(k) / float64(rim))
		items = append(items, pad(k+1, b*c, b*s))
	}
	g := copperNetwork(items, []zoneFill{disc})
	fixed := map[int]bool{}
	for k := range rim {
		fixed[g.padNode(k+1)] = true
	}
	v, err := g.solve(fixed, map[int]float64{g.padNode(0): 1})
	if err != nil {
		t.Fatal(err)
	}
	ohm := func(a, b float64) float64 { return math.Log(b/a) / (2 * math.Pi * copperThick / copperRho) }
	lo, hi := ohm(1.05, b-1.05), ohm(0.8, b)
	if got := v[g.padNode(0)]; got < lo || got > hi {
		t.Errorf("the disc conducts %.4f mΩ, want %.4f to %.4f", got*1000, lo*1000, hi*1000)
	}
}

// TestSupplySolverKirchhoff solves a network too large to factor at one
// level — a 70 × 70 grid, each joint's conductance random over eight
// decades, with random long links and nodes merged as overlapping copper
// is — and checks Kirchhoff's current law at every node.
func TestSupplySolverKirchhoff(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const side = 70
	g := &network{}
	for range side * side {
		g.node()
	}
	cond := func() float64 { return math.Pow(10, rng.Float64()*8-2) }
	for y := range side {
		for x := range side {
			i := y*side + x
			if x+1 < side {
				g.edges = append(g.edges, edge{i, i + 1, cond()})
			}
			if y+1 < side {
				g.edges = append(g.edges, edge{i, i + side, cond()})
			}
		}
	}
	for range side * 2 {
		g.edges = append(g.edges, edge{rng.IntN(side * side), rng.IntN(side * side), cond()})
	}
	for range side {
		g.join(rng.IntN(side*side), rng.IntN(side*side))
	}
	fixed := map[int]bool{0: true, side*side - 1: true}
	inject := map[int]float64{}
	for range side * 3 {
		inject[rng.IntN(side*side)] = rng.Float64() - 0.3
	}
	v, err := g.solve(fixed, inject)
	if err != nil {
		t.Fatal(err)
	}
	// The current each node's edges carry out of it, minus what is
	// drawn there, is zero but at the fixed nodes.
	net := make([]float64, len(g.parent))
	for _, e := range g.edges {
		a, b := g.find(e.a), g.find(e.b)
		i := e.g * (v[a] - v[b]) // v is negated potential: current from b to a
		net[a] -= i
		net[b] += i
	}
	for n, i := range inject {
		net[g.find(n)] += i
	}
	total := 0.0
	for _, i := range inject {
		total += math.Abs(i)
	}
	for n := range net {
		if g.find(n) != n || n == g.find(0) || n == g.find(side*side-1) {
			continue
		}
		if math.Abs(net[n]) > 1e-7*total {
			t.Fatalf("node %d: %.3g A unaccounted for (of %.3g A drawn)", n, net[n], total)
		}
	}
}
