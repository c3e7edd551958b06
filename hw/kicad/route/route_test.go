package route_test

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"testing"

	"github.com/ttlpapers/ttlpapers/hw/kicad/route"
)

// dips is a small board: two rows of three 14-pin DIPs (2.54 mm pitch, on
// the grid), every pin on a net that joins the same pin number of chips
// in crossing patterns, so nets must cross each other and need vias.
func dips() route.Placement {
	b := route.Placement{X0: 0, Y0: 0, X1: 70000, Y1: 60000}
	for c := 0; c < 6; c++ {
		x0, y0 := 8890+(c%3)*20320, 8890+(c/3)*25400
		for i := 0; i < 14; i++ {
			x, y := x0, y0+i*2540
			if i >= 7 {
				x, y = x0+7620, y0+(13-i)*2540
			}
			// Chip c's pin i joins pin (i+c)%14's net: the same net sits on
			// different pins of each chip.
			b.Pads = append(b.Pads, route.Pad{Net: fmt.Sprintf("N%d", (i+c)%14), X: x, Y: y, W: 1600, H: 1600, Round: i != 0, Drill: 800})
		}
	}
	return b
}

// TestRouteIsDeterministic routes the same board twice.
func TestRouteIsDeterministic(t *testing.T) {
	a, err := route.Route(dips(), route.Hobby)
	if err != nil {
		t.Fatal(err)
	}
	b, err := route.Route(dips(), route.Hobby)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Error("two routings of one board differ")
	}
	if len(a.Vias) == 0 {
		t.Error("no vias: the board does not test crossing nets")
	}
}

// copperDist is the distance between the copper of two round-ended
// segments (a point is a segment of length 0) of the given widths.
func copperDist(ax0, ay0, ax1, ay1, aw, bx0, by0, bx1, by1, bw float64) float64 {
	ps := func(x, y, x0, y0, x1, y1 float64) float64 {
		dx, dy := x1-x0, y1-y0
		t := 0.0
		if l := dx*dx + dy*dy; l > 0 {
			t = math.Max(0, math.Min(1, ((x-x0)*dx+(y-y0)*dy)/l))
		}
		return math.Hypot(x-x0-t*dx, y-y0-t*dy)
	}
	// Grid tracks are horizontal or vertical: two that cross also come
	// within 0 of an end of one of them, or are caught as parallel
	// neighbours, so the ends suffice but for a plain cross.
	d := math.Min(math.Min(ps(ax0, ay0, bx0, by0, bx1, by1), ps(ax1, ay1, bx0, by0, bx1, by1)),
		math.Min(ps(bx0, by0, ax0, ay0, ax1, ay1), ps(bx1, by1, ax0, ay0, ax1, ay1)))
	if ax0 == ax1 && by0 == by1 && math.Min(bx0, bx1) <= ax0 && ax0 <= math.Max(bx0, bx1) && math.Min(ay0, ay1) <= by0 && by0 <= math.Max(ay0, ay1) ||
		ay0 == ay1 && bx0 == bx1 && math.Min(ax0, ax1) <= bx0 && bx0 <= math.Max(ax0, ax1) && math.Min(by0, by1) <= ay0 && ay0 <= math.Max(by0, by1) {
		d = 0
	}
	return d - aw/2 - bw/2
}

// TestRouteKeepsClearances checks every pair of copper items of different
// nets on a shared layer — pads, tracks, vias — against the rules, and
// every track and via against the board edge.
func TestRouteKeepsClearances(t *testing.T) {
	b, r := dips(), route.Hobby
	res, err := route.Route(b, r)
	if err != nil {
		t.Fatal(err)
	}
	type item struct {
		x0, y0, x1, y1, w float64
		layers            int
		net, what         string
		rect              bool // a rectangular pad, w×w
	}
	var items []item
	for _, p := range b.Pads {
		items = append(items, item{float64(p.X), float64(p.Y), float64(p.X), float64(p.Y), float64(p.W), 3, p.Net, fmt.Sprintf("pad at %d,%d", p.X, p.Y), !p.Round})
	}
	for _, s := range res.Segments {
		items = append(items, item{float64(s.X0), float64(s.Y0), float64(s.X1), float64(s.Y1), float64(s.Width), 1 << s.Layer, s.Net, fmt.Sprintf("%+v", s), false})
	}
	for _, v := range res.Vias {
		items = append(items, item{float64(v.X), float64(v.Y), float64(v.X), float64(v.Y), float64(r.ViaSize), 3, v.Net, fmt.Sprintf("via %+v", v), false})
	}
	bad := 0
	for i, a := range items {
		for _, c := range items[i+1:] {
			if a.net == c.net || a.layers&c.layers == 0 {
				continue
			}
			if a.rect && c.rect {
				continue // two pads: where the board's designer put them
			}
			d := copperDist(a.x0, a.y0, a.x1, a.y1, a.w, c.x0, c.y0, c.x1, c.y1, c.w)
			if p, q := a, c; p.rect || q.rect {
				if q.rect {
					p, q = q, p
				}
				// Box to box (a grid track is an axis-aligned box of no
				// width), less the track's half width.
				gap := func(lo, hi, p0, p1 float64) float64 {
					return math.Max(0, math.Max(lo-math.Max(p0, p1), math.Min(p0, p1)-hi))
				}
				d = math.Hypot(gap(p.x0-p.w/2, p.x0+p.w/2, q.x0, q.x1), gap(p.y0-p.w/2, p.y0+p.w/2, q.y0, q.y1)) - q.w/2
			}
			if (a.what[0] != 'p' || c.what[0] != 'p') && d < float64(r.Clearance)-0.5 {
				if bad++; bad < 10 {
					t.Errorf("%s (%s) and %s (%s) closer than %d µm", a.what, a.net, c.what, c.net, r.Clearance)
				}
			}
		}
		if a.what[0] != 'p' {
			edge := math.Min(math.Min(a.x0, a.x1)-float64(b.X0), math.Min(a.y0, a.y1)-float64(b.Y0))
			edge = math.Min(edge, math.Min(float64(b.X1)-math.Max(a.x0, a.x1), float64(b.Y1)-math.Max(a.y0, a.y1)))
			if edge-a.w/2 < float64(r.EdgeClearance) {
				t.Errorf("%s is %v µm from the board edge", a.what, edge-a.w/2)
			}
		}
	}
}

// TestRouteReportsUnroutable walls a pad in with other nets' pads.
func TestRouteReportsUnroutable(t *testing.T) {
	b := route.Placement{X0: 0, Y0: 0, X1: 20000, Y1: 20000}
	b.Pads = append(b.Pads, route.Pad{Net: "A", X: 10160, Y: 10160, W: 1600, H: 1600, Round: true, Drill: 800},
		route.Pad{Net: "A", X: 2540, Y: 2540, W: 1600, H: 1600, Round: true, Drill: 800})
	for dx := -1; dx <= 1; dx++ {
		for dy := -1; dy <= 1; dy++ {
			if dx != 0 || dy != 0 {
				b.Pads = append(b.Pads, route.Pad{Net: "B", X: 10160 + dx*1905, Y: 10160 + dy*1905, W: 1600, H: 1600, Round: true, Drill: 800})
			}
		}
	}
	b.Pads = append(b.Pads, route.Pad{Net: "B", X: 17780, Y: 17780, W: 1600, H: 1600, Round: true, Drill: 800})
	_, err := route.Route(b, route.Hobby)
	if !errors.Is(err, route.ErrUnroutable) {
		t.Fatalf("got %v, want ErrUnroutable", err)
	}
}

// TestRouteRejectsBadRules gives rules no board can be routed with, and
// an empty outline: each is refused as such, before any routing.
func TestRouteRejectsBadRules(t *testing.T) {
	for name, bad := range map[string]func(*route.Rules, *route.Placement){
		"grid 0":        func(r *route.Rules, _ *route.Placement) { r.Grid = 0 },
		"track 0":       func(r *route.Rules, _ *route.Placement) { r.Track = 0 },
		"no layer":      func(r *route.Rules, _ *route.Placement) { r.Layers = 0 },
		"three layers":  func(r *route.Rules, _ *route.Placement) { r.Layers = 3 },
		"empty outline": func(_ *route.Rules, b *route.Placement) { b.X1 = b.X0 },
	} {
		r, b := route.Hobby, dips()
		bad(&r, &b)
		if _, err := route.Route(b, r); !errors.Is(err, route.ErrRules) {
			t.Errorf("%s: %v, want route.ErrRules", name, err)
		}
	}
}

// TestRouteWithJumpers routes the small board as a one-layer board with
// jumper wires: the front, standing for the jumpers, carries well under
// what it carries when it is a copper layer (this board is all crossings:
// every chip has every net, in another order).
func TestRouteWithJumpers(t *testing.T) {
	front := func(r route.Rules) int {
		res, err := route.Route(dips(), r)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, s := range res.Segments {
			if s.Layer == 0 {
				n += max(s.X1-s.X0, s.X0-s.X1) + max(s.Y1-s.Y0, s.Y0-s.Y1)
			}
		}
		return n
	}
	r := route.Hobby
	two := front(r)
	r.Jumpers = true
	if one := front(r); one*4 > two*3 {
		t.Errorf("jumper wires %d µm long in all, the front layer of the two-layer routing %d µm: want under three quarters", one, two)
	}
}
