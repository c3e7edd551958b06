package kicad

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// What the board is to be made of: the stackup the board file declares
// (so KiCad's Gerber job file names it too) and the fab note repeats.
// Through-hole parts solder well on a lead-free hot-air levelled finish,
// the cheapest at every house.
const (
	fabThickness = 1.6   // mm, FR-4
	fabCopper    = 0.035 // mm: 1 oz/ft² on both layers
	fabFinish    = "HAL lead-free"
)

// stackup writes the board file's stackup: two copper layers on 1.6 mm of
// FR-4, solder mask and silkscreen on both sides, and the finish.
func stackup(w *writer) {
	w.open("(stackup")
	w.line("(layer \"F.SilkS\" (type \"Top Silk Screen\"))")
	w.line("(layer \"F.Paste\" (type \"Top Solder Paste\"))")
	w.line("(layer \"F.Mask\" (type \"Top Solder Mask\") (thickness 0.01))")
	w.line("(layer \"F.Cu\" (type \"copper\") (thickness %v))", fabCopper)
	w.line("(layer \"dielectric 1\" (type \"core\") (thickness %v) (material \"FR4\") (epsilon_r 4.5) (loss_tangent 0.02))", math.Round((fabThickness-2*fabCopper-0.02)*1000)/1000)
	w.line("(layer \"B.Cu\" (type \"copper\") (thickness %v))", fabCopper)
	w.line("(layer \"B.Mask\" (type \"Bottom Solder Mask\") (thickness 0.01))")
	w.line("(layer \"B.Paste\" (type \"Bottom Solder Paste\"))")
	w.line("(layer \"B.SilkS\" (type \"Bottom Silk Screen\"))")
	w.line("(copper_finish %s)", quote(fabFinish))
	w.line("(dielectric_constraints no)")
	w.close()
}

// fabFigures are the board's smallest features, measured from its file
// (mm): what a board house checks against its capabilities.
type fabFigures struct {
	Track, Spacing, Ring, HoleGap float64
	Drill, NPDrill                float64 // smallest plated and non-plated hole (0: none)
	ViaSize, ViaDrill             float64
	Holes, NPHoles, Vias          int
}

// hole is a drilled hole: centre and diameter.
type hole struct{ x, y, d float64 }

// measure reads a board file's copper and holes. Spacing is the least gap
// between copper of two different nets (or of pads on no net) on a common
// layer, measured conservatively: a rounded or oval pad counts as its
// rectangle.
func measure(src []byte) (*fabFigures, error) {
	root, err := ParseExpr(string(src))
	if err != nil {
		return nil, err
	}
	if root.Head() != "kicad_pcb" {
		return nil, fmt.Errorf("kicad: not a board file (starts with %q)", root.Head())
	}
	netName := map[string]string{}
	for _, n := range root.Children("net") {
		netName[n.Arg(0)] = n.Arg(1)
	}
	f := &fabFigures{Track: math.Inf(1), Ring: math.Inf(1), Drill: math.Inf(1), NPDrill: math.Inf(1), ViaSize: math.Inf(1), ViaDrill: math.Inf(1)}
	r := fabReader{f: f}
	if err := r.pads(root); err != nil {
		return nil, err
	}
	if err := r.tracksAndVias(root, netName); err != nil {
		return nil, err
	}
	f.Spacing = copperSpacing(r.items, r.nets)
	f.HoleGap = holeGap(r.holes)
	for _, v := range []*float64{&f.Track, &f.Ring, &f.Drill, &f.NPDrill, &f.ViaSize, &f.ViaDrill} {
		if math.IsInf(*v, 1) {
			*v = 0
		}
	}
	return f, nil
}

// fabReader collects a board's figures (f), and its copper, the net of
// each piece, and its holes, for the gaps between them.
type fabReader struct {
	f     *fabFigures
	items []copperItem
	nets  []string
	holes []hole
}

// pads reads the footprints' pads.
func (r *fabReader) pads(root *Expr) error {
	for _, fp := range root.Children("footprint") {
		fx, fy, frot, err := position(fp.Child("at"))
		if err != nil {
			return err
		}
		for _, p := range fp.Children("pad") {
			px, py, prot, err := position(p.Child("at"))
			w, h, err2 := pair(p.Child("size"))
			d, err3 := drillOf(p.Child("drill"))
			if err != nil || err2 != nil || err3 != nil {
				return fmt.Errorf("kicad: pad %s: bad position, size or drill", p.Arg(0))
			}
			s, c := math.Sincos(frot * math.Pi / 180)
			x, y := fx+px*c+py*s, fy-px*s+py*c
			if int(math.Round(prot))%180 != 0 { // the pad's angle in the file includes the footprint's
				w, h = h, w
			}
			r.holes = append(r.holes, hole{x, y, d})
			if p.Arg(1) == "np_thru_hole" {
				r.f.NPHoles++
				r.f.NPDrill = min(r.f.NPDrill, d)
				continue
			}
			r.f.Holes++
			r.f.Drill = min(r.f.Drill, d)
			r.f.Ring = min(r.f.Ring, (min(w, h)-d)/2)
			net := p.Child("net").Arg(1)
			if net == "" {
				net = fmt.Sprintf("(no net %d)", len(r.items)) // copper of its own
			}
			r.items = append(r.items, copperItem{layers: allCopper, round: p.Arg(2) == "circle", x0: x, y0: y, x1: x, y1: y, w: w, h: h})
			r.nets = append(r.nets, net)
		}
	}
	return nil
}

// tracksAndVias reads the track segments and vias; netName names the
// file's net numbers.
func (r *fabReader) tracksAndVias(root *Expr, netName map[string]string) error {
	for _, s := range root.Children("segment") {
		it, err := segmentItem(s)
		if err != nil {
			return err
		}
		r.f.Track = min(r.f.Track, it.w)
		r.items = append(r.items, it)
		r.nets = append(r.nets, netName[s.Child("net").Arg(0)])
	}
	for _, v := range root.Children("via") {
		x, y, err := pair(v.Child("at"))
		d, err2 := strconv.ParseFloat(v.Child("size").Arg(0), 64)
		dr, err3 := strconv.ParseFloat(v.Child("drill").Arg(0), 64)
		if err != nil || err2 != nil || err3 != nil {
			return fmt.Errorf("kicad: via with a bad position, size or drill")
		}
		r.f.Vias++
		r.f.ViaSize, r.f.ViaDrill = min(r.f.ViaSize, d), min(r.f.ViaDrill, dr)
		r.f.Ring = min(r.f.Ring, (d-dr)/2)
		r.holes = append(r.holes, hole{x, y, dr})
		r.items = append(r.items, copperItem{layers: allCopper, round: true, x0: x, y0: y, x1: x, y1: y, w: d, h: d})
		r.nets = append(r.nets, netName[v.Child("net").Arg(0)])
	}
	return nil
}

// drillOf reads a pad's drill: its diameter, or an oval's smaller size.
func drillOf(e *Expr) (float64, error) {
	var sizes []float64
	for _, a := range e.List[1:] {
		if v, err := strconv.ParseFloat(a.Atom, 64); err == nil && !a.IsList {
			sizes = append(sizes, v)
		}
	}
	if len(sizes) == 0 {
		return 0, fmt.Errorf("kicad: drill without a size")
	}
	return slices.Min(sizes), nil
}

// box is an item's extent, for the sweep.
func (a *copperItem) box() (l, r float64) {
	return min(a.x0, a.x1) - a.reach(), max(a.x0, a.x1) + a.reach()
}

// gap is the distance between two items' copper.
func (a *copperItem) gap(b *copperItem) float64 {
	if !a.round {
		a, b = b, a
	}
	switch {
	case a.round && b.round:
		return segDist(a.x0, a.y0, a.x1, a.y1, b.x0, b.y0, b.x1, b.y1) - a.w/2 - b.w/2
	case a.round:
		return rectSegDist(b, a.x0, a.y0, a.x1, a.y1) - a.w/2
	}
	l, t, r, bt := a.x0-a.w/2, a.y0-a.h/2, a.x0+a.w/2, a.y0+a.h/2
	return min(rectSegDist(b, l, t, r, t), rectSegDist(b, r, t, r, bt), rectSegDist(b, r, bt, l, bt), rectSegDist(b, l, bt, l, t))
}

// copperSpacing is the least gap between items of different nets on a
// common layer: a sweep along x, so only neighbours are measured.
func copperSpacing(items []copperItem, nets []string) float64 {
	order := make([]int, len(items))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int {
		li, _ := items[i].box()
		lj, _ := items[j].box()
		return cmpFloat(li, lj)
	})
	best := math.Inf(1)
	for k, i := range order {
		_, ri := items[i].box()
		for _, j := range order[k+1:] {
			if lj, _ := items[j].box(); lj-ri > best {
				break
			}
			if nets[i] != nets[j] && items[i].layers&items[j].layers != 0 {
				best = min(best, items[i].gap(&items[j]))
			}
		}
	}
	return best
}

// holeGap is the least wall-to-wall distance between two holes.
func holeGap(holes []hole) float64 {
	slices.SortFunc(holes, func(a, b hole) int { return cmpFloat(a.x-a.d/2, b.x-b.d/2) })
	best := math.Inf(1)
	for i, a := range holes {
		for _, b := range holes[i+1:] {
			if b.x-b.d/2-(a.x+a.d/2) > best {
				break
			}
			best = min(best, math.Hypot(a.x-b.x, a.y-b.y)-a.d/2-b.d/2)
		}
	}
	return best
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// FabNote is the note for the board house: what to make, and the board's
// smallest features as measured from its file (pcb), with the board's size
// from KiCad's job file.
func FabNote(title string, pcb []byte, sizeX, sizeY float64, files []string) ([]byte, error) {
	f, err := measure(pcb)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("%s: fabrication note", title)
	p("")
	p("Board       %.2f x %.2f mm, outline in the Edge_Cuts file", sizeX, sizeY)
	p("Layers      2 copper layers (top, bottom), plated through holes")
	p("Material    FR-4, %.1f mm thick", fabThickness)
	p("Copper      %g um (1 oz) both layers", fabCopper*1000)
	p("Finish      HASL lead-free")
	p("Solder mask both sides, any colour")
	p("Silkscreen  white")
	p("")
	p("Measured from the board file:")
	p("  smallest track width           %.3f mm", f.Track)
	p("  smallest copper gap            %.3f mm (different nets, same layer; pads as rectangles)", f.Spacing)
	p("  smallest plated hole           %.3f mm (%d component holes)", f.Drill, f.Holes)
	if f.Vias > 0 {
		p("  vias                           %d, %.3f mm pad, %.3f mm hole", f.Vias, f.ViaSize, f.ViaDrill)
	}
	if f.NPHoles > 0 {
		p("  non-plated holes               %d, smallest %.3f mm", f.NPHoles, f.NPDrill)
	}
	p("  smallest annular ring          %.3f mm", f.Ring)
	p("  smallest hole-to-hole gap      %.3f mm (wall to wall)", f.HoleGap)
	p("")
	p("Files:")
	for _, name := range files {
		p("  %s", name)
	}
	return []byte(b.String()), nil
}
