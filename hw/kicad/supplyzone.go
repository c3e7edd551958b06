package kicad

import (
	"fmt"
	"math"
	"slices"
)

// zoneFill is one filled polygon of a copper zone, as KiCad stores a
// zone's fill: a layer, the zone's net, and an outline in millimetres
// (holes joined to it by slits of no width, so the even-odd rule gives
// the copper).
type zoneFill struct {
	layer, net int
	pts        [][2]float64
}

// zoneFills reads every zone's filled polygons.
func zoneFills(root *Expr) ([]zoneFill, error) {
	var out []zoneFill
	for _, z := range root.Children("zone") {
		net := netCode(z)
		for _, f := range z.Children("filled_polygon") {
			zf := zoneFill{layer: layerBit(f.Child("layer").Arg(0)), net: net}
			for _, xy := range f.Child("pts").Children("xy") {
				x, y, err := pair(xy)
				if err != nil {
					return nil, fmt.Errorf("kicad: zone fill: %w", err)
				}
				zf.pts = append(zf.pts, [2]float64{x, y})
			}
			if zf.layer != 1 && zf.layer != 2 {
				return nil, fmt.Errorf("kicad: zone fill on layer %q: this reader knows F.Cu and B.Cu", f.Child("layer").Arg(0))
			}
			out = append(out, zf)
		}
	}
	return out, nil
}

// zoneCell is the side of the square cells a zone's fill is measured in,
// mm: finer than the 0.635 mm routing grid, so that fill between two
// tracks counts; a neck of fill narrower than a cell may be lost, which
// errs towards more resistance.
const zoneCell = 0.25

// contact is where an item's copper may meet a zone's: a point on one
// layer and the distance from it that the item's copper reaches.
type contact struct {
	layer int
	x, y  float64
	reach float64
	node  int
}

// addZones adds a net's zone fills to g, each layer's as a grid of cells
// (a cell is copper when its centre is inside the fill) joined to their
// neighbours, and joins each item to the fill cells its copper reaches.
func (g *network) addZones(fills []zoneFill, contacts []contact) {
	for _, layer := range []int{1, 2} {
		z, ok := g.zoneCells(fills, layer)
		if !ok {
			continue
		}
		g.joinCells(z)
		g.joinContacts(z, contacts, layer)
	}
}

// zoneGrid is one layer's zone fill as cells: nx by ny from (x0, y0), mm,
// each holding its node+1, or 0 where there is no copper.
type zoneGrid struct {
	x0, y0 float64
	nx, ny int
	cell   []int
}

// zoneCells makes a node of each cell of layer whose centre is inside a
// fill on it, row by row by the even-odd rule; false when the layer has
// no fill.
func (g *network) zoneCells(fills []zoneFill, layer int) (zoneGrid, bool) {
	var polys [][][2]float64
	x0, y0, x1, y1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, f := range fills {
		if f.layer != layer {
			continue
		}
		polys = append(polys, f.pts)
		for _, p := range f.pts {
			x0, y0, x1, y1 = min(x0, p[0]), min(y0, p[1]), max(x1, p[0]), max(y1, p[1])
		}
	}
	if polys == nil {
		return zoneGrid{}, false
	}
	nx, ny := int((x1-x0)/zoneCell)+1, int((y1-y0)/zoneCell)+1
	cell := make([]int, nx*ny) // node+1, 0 where no copper
	var xs []float64
	for j := range ny {
		y := y0 + (float64(j)+0.5)*zoneCell
		xs = xs[:0]
		for _, pts := range polys {
			for k := range pts {
				a, b := pts[k], pts[(k+1)%len(pts)]
				if (a[1] <= y) != (b[1] <= y) {
					xs = append(xs, a[0]+(y-a[1])*(b[0]-a[0])/(b[1]-a[1]))
				}
			}
		}
		slices.Sort(xs)
		for k := 0; k+1 < len(xs); k += 2 {
			for i := max(0, int(math.Ceil((xs[k]-x0)/zoneCell-0.5))); i < nx && x0+(float64(i)+0.5)*zoneCell <= xs[k+1]; i++ {
				cell[j*nx+i] = g.node() + 1
			}
		}
	}
	return zoneGrid{x0, y0, nx, ny, cell}, true
}

// joinCells joins each copper cell to its copper neighbours by the
// conductance of a square of copper, t/ρ whatever its size.
func (g *network) joinCells(z zoneGrid) {
	nx, ny, cell := z.nx, z.ny, z.cell
	sheet := copperThick / copperRho
	for j := range ny {
		for i := range nx {
			c := cell[j*nx+i]
			if c == 0 {
				continue
			}
			if i+1 < nx && cell[j*nx+i+1] != 0 {
				g.edges = append(g.edges, edge{c - 1, cell[j*nx+i+1] - 1, sheet})
			}
			if j+1 < ny && cell[(j+1)*nx+i] != 0 {
				g.edges = append(g.edges, edge{c - 1, cell[(j+1)*nx+i] - 1, sheet})
			}
		}
	}
}

// joinContacts joins each contact on layer to the copper cells its item
// reaches, to a cell more: a pad joins its fill through the spokes of a
// thermal relief, across a gap.
func (g *network) joinContacts(z zoneGrid, contacts []contact, layer int) {
	x0, y0, nx, ny, cell := z.x0, z.y0, z.nx, z.ny, z.cell
	for _, c := range contacts {
		if c.layer&layer == 0 {
			continue
		}
		r := c.reach + zoneCell
		for j := max(0, int((c.y-r-y0)/zoneCell)); j < ny && y0+float64(j)*zoneCell <= c.y+r; j++ {
			for i := max(0, int((c.x-r-x0)/zoneCell)); i < nx && x0+float64(i)*zoneCell <= c.x+r; i++ {
				cx, cy := x0+(float64(i)+0.5)*zoneCell, y0+(float64(j)+0.5)*zoneCell
				if k := cell[j*nx+i]; k != 0 && math.Hypot(cx-c.x, cy-c.y) <= r {
					g.join(c.node, k-1)
				}
			}
		}
	}
}
