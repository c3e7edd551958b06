package kicad

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// ReadCopper reads a board file's copper — through-hole pads, track
// segments and vias — and returns the pads that copper joins, as groups:
// two pieces of copper on a common layer are joined when they touch or
// overlap, whatever nets the file names. A routed board is right when its
// groups are its netlist's nets: a missing track splits a net into two
// groups, a short merges two nets into one.
func ReadCopper(src []byte) ([][]Node, error) {
	root, err := ParseExpr(string(src))
	if err != nil {
		return nil, err
	}
	if root.Head() != "kicad_pcb" {
		return nil, fmt.Errorf("kicad: not a board file (starts with %q)", root.Head())
	}
	pads, items, err := copperItems(root)
	if err != nil {
		return nil, err
	}
	find := joinTouching(items)
	var groups [][]Node
	index := map[int]int{}
	for i, it := range items {
		if it.pad < 0 {
			continue
		}
		r := find(i)
		k, ok := index[r]
		if !ok {
			k = len(groups)
			index[r] = k
			groups = append(groups, nil)
		}
		groups[k] = append(groups[k], pads[it.pad])
	}
	return groups, nil
}

// copperItems reads a board's copper: its pads (the Nodes), then the
// items — pads, track segments and vias.
func copperItems(root *Expr) ([]Node, []copperItem, error) {
	pads, items, err := boardPads(root)
	if err != nil {
		return nil, nil, err
	}
	for _, s := range root.Children("segment") {
		it, err := segmentItem(s)
		if err != nil {
			return nil, nil, err
		}
		items = append(items, it)
	}
	for _, v := range root.Children("via") {
		x, y, err := pair(v.Child("at"))
		d, err2 := strconv.ParseFloat(v.Child("size").Arg(0), 64)
		if err != nil || err2 != nil {
			return nil, nil, fmt.Errorf("kicad: via with a bad position or size")
		}
		items = append(items, copperItem{layers: allCopper, pad: -1, round: true, x0: x, y0: y, x1: x, y1: y, w: d, h: d, net: netCode(v)})
	}
	return pads, items, nil
}

// joinTouching joins the items that touch, directly or through others,
// and returns find: the same number for items joined.
func joinTouching(items []copperItem) func(int) int {
	parent := make([]int, len(items))
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	touching(items, func(i, j int) { parent[find(i)] = find(j) })
	return find
}

// touching calls meet(i, j) for each pair of items that touch, i before j
// in a sweep along x: only items whose boxes overlap can touch, so each is
// measured against those whose box starts before its own ends (a 32-PE
// board has some 15 000 items).
func touching(items []copperItem, meet func(i, j int)) {
	box := make([][4]float64, len(items))
	order := make([]int, len(items))
	for i, it := range items {
		r := it.reach()
		box[i] = [4]float64{min(it.x0, it.x1) - r, min(it.y0, it.y1) - r, max(it.x0, it.x1) + r, max(it.y0, it.y1) + r}
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return box[order[a]][0] < box[order[b]][0] })
	for p, i := range order {
		for _, j := range order[p+1:] {
			if box[j][0] > box[i][2]+1e-6 {
				break
			}
			if box[j][1] <= box[i][3]+1e-6 && box[i][1] <= box[j][3]+1e-6 && items[i].touches(&items[j]) {
				meet(i, j)
			}
		}
	}
}

// segmentItem reads a track segment.
func segmentItem(s *Expr) (copperItem, error) {
	x0, y0, err := pair(s.Child("start"))
	x1, y1, err2 := pair(s.Child("end"))
	w, err3 := strconv.ParseFloat(s.Child("width").Arg(0), 64)
	if err != nil || err2 != nil || err3 != nil {
		return copperItem{}, fmt.Errorf("kicad: segment with a bad start, end or width")
	}
	return copperItem{layers: layerBit(s.Child("layer").Arg(0)), pad: -1, round: true, x0: x0, y0: y0, x1: x1, y1: y1, w: w, h: w, net: netCode(s)}, nil
}

// position reads an (at x y [angle]) list.
func position(at *Expr) (x, y, rot float64, err error) {
	if x, y, err = pair(at); err != nil {
		return 0, 0, 0, err
	}
	if a := at.Arg(2); a != "" {
		rot, err = strconv.ParseFloat(a, 64)
	}
	return x, y, rot, err
}

// pair reads the first two numbers of a list.
func pair(e *Expr) (a, b float64, err error) {
	a, err = strconv.ParseFloat(e.Arg(0), 64)
	if err == nil {
		b, err = strconv.ParseFloat(e.Arg(1), 64)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("kicad: (%s %s %s) is not a pair of numbers", e.Head(), e.Arg(0), e.Arg(1))
	}
	return a, b, nil
}

// Copper layers as bits.
const allCopper = 3

func layerBit(name string) int {
	switch {
	case name == "F.Cu":
		return 1
	case name == "B.Cu":
		return 2
	case strings.HasSuffix(name, ".Cu"):
		return allCopper // an inner layer: this reader knows two-layer boards only, so it joins conservatively
	}
	return 0
}

// boardPads reads a board's through-hole pads: each one's footprint
// reference and number, and its copper in board coordinates.
func boardPads(root *Expr) (pads []Node, items []copperItem, err error) {
	for _, fp := range root.Children("footprint") {
		ref := fpReference(fp)
		fx, fy, frot, err := position(fp.Child("at"))
		if err != nil {
			return nil, nil, fmt.Errorf("kicad: footprint %s: %v", ref, err)
		}
		for _, p := range fp.Children("pad") {
			if p.Arg(0) == "0" || p.Arg(1) != "thru_hole" {
				continue // a mounting hole, or a pad this reader does not know
			}
			px, py, _, err := position(p.Child("at"))
			w, h, err2 := pair(p.Child("size"))
			if err != nil || err2 != nil {
				return nil, nil, fmt.Errorf("kicad: pad %s of %s: bad position or size", p.Arg(0), ref)
			}
			// KiCad turns footprints clockwise on screen (y down).
			s, c := math.Sincos(frot * math.Pi / 180)
			x, y := fx+px*c+py*s, fy-px*s+py*c
			items = append(items, copperItem{layers: allCopper, pad: len(pads), round: p.Arg(2) == "circle",
				x0: x, y0: y, x1: x, y1: y, w: w, h: h, net: netCode(p)})
			pads = append(pads, Node{ref, p.Arg(0)})
		}
	}
	return pads, items, nil
}

// PadCentres reads a board file: each footprint's centre, the middle of
// the box round its pads' centres, in board coordinates (millimetres, y
// down). A board house's placement preview wants a part's centre; KiCad's
// own position file gives a through-hole footprint's anchor, its pin 1.
func PadCentres(src []byte) (map[string][2]float64, error) {
	root, err := ParseExpr(string(src))
	if err != nil {
		return nil, err
	}
	pads, items, err := boardPads(root)
	if err != nil {
		return nil, err
	}
	box := map[string][4]float64{}
	for i, p := range pads {
		x, y := items[i].x0, items[i].y0
		b, ok := box[p.Ref]
		if !ok {
			b = [4]float64{x, y, x, y}
		}
		box[p.Ref] = [4]float64{min(b[0], x), min(b[1], y), max(b[2], x), max(b[3], y)}
	}
	out := map[string][2]float64{}
	for ref, b := range box {
		out[ref] = [2]float64{(b[0] + b[2]) / 2, (b[1] + b[3]) / 2}
	}
	return out, nil
}

// copperItem is a pad (a point with a round or rectangular w×h shape), a
// track (a round-ended segment of width w) or a via (a round point).
type copperItem struct {
	layers         int
	pad            int // index into the pads, or -1
	round          bool
	x0, y0, x1, y1 float64
	w, h           float64
	net            int // the net code the file gives it (0: none)
}

// netCode is the code of an item's (net N …), 0 if it names none.
func netCode(e *Expr) int {
	n, _ := strconv.Atoi(e.Child("net").Arg(0))
	return n
}

// touches reports whether two items share a layer and their copper meets.
// A rectangular pad is measured as its rectangle (roundrect corners as
// square ones, which errs towards joining: a short is never missed).
func (a *copperItem) touches(b *copperItem) bool {
	if a.layers&b.layers == 0 {
		return false
	}
	if !a.round {
		a, b = b, a
	}
	if !b.round && a.round {
		return rectSegDist(b, a.x0, a.y0, a.x1, a.y1) <= a.w/2+1e-6
	}
	return segDist(a.x0, a.y0, a.x1, a.y1, b.x0, b.y0, b.x1, b.y1) <= a.reach()+b.reach()+1e-6
}

func (a *copperItem) reach() float64 {
	if a.round {
		return a.w / 2
	}
	return math.Hypot(a.w, a.h) / 2
}

// rectSegDist is the distance from a segment to rectangular pad r.
func rectSegDist(r *copperItem, x0, y0, x1, y1 float64) float64 {
	l, t, rt, b := r.x0-r.w/2, r.y0-r.h/2, r.x0+r.w/2, r.y0+r.h/2
	if x0 >= l && x0 <= rt && y0 >= t && y0 <= b {
		return 0
	}
	return math.Min(
		math.Min(segDist(x0, y0, x1, y1, l, t, rt, t), segDist(x0, y0, x1, y1, rt, t, rt, b)),
		math.Min(segDist(x0, y0, x1, y1, rt, b, l, b), segDist(x0, y0, x1, y1, l, b, l, t)))
}

// segDist is the distance between segments p0p1 and q0q1 (either may be a
// point); they do not cross on a board the router made, but a crossing
// counts as distance 0.
func segDist(px0, py0, px1, py1, qx0, qy0, qx1, qy1 float64) float64 {
	if crosses(px0, py0, px1, py1, qx0, qy0, qx1, qy1) {
		return 0
	}
	return math.Min(
		math.Min(pointSeg(px0, py0, qx0, qy0, qx1, qy1), pointSeg(px1, py1, qx0, qy0, qx1, qy1)),
		math.Min(pointSeg(qx0, qy0, px0, py0, px1, py1), pointSeg(qx1, qy1, px0, py0, px1, py1)))
}

func pointSeg(x, y, x0, y0, x1, y1 float64) float64 {
	dx, dy := x1-x0, y1-y0
	t := 0.0
	if l := dx*dx + dy*dy; l > 0 {
		t = math.Max(0, math.Min(1, ((x-x0)*dx+(y-y0)*dy)/l))
	}
	return math.Hypot(x-x0-t*dx, y-y0-t*dy)
}

func crosses(px0, py0, px1, py1, qx0, qy0, qx1, qy1 float64) bool {
	d := func(ax, ay, bx, by, cx, cy float64) float64 { return (bx-ax)*(cy-ay) - (by-ay)*(cx-ax) }
	d1, d2 := d(qx0, qy0, qx1, qy1, px0, py0), d(qx0, qy0, qx1, qy1, px1, py1)
	d3, d4 := d(px0, py0, px1, py1, qx0, qy0), d(px0, py0, px1, py1, qx1, qy1)
	return (d1 > 0) != (d2 > 0) && d1 != 0 && d2 != 0 && (d3 > 0) != (d4 > 0) && d3 != 0 && d4 != 0
}
