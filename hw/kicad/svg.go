package kicad

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"strings"
)

// SVG draws a schematic written by Schematic (it understands the subset of
// the KiCad format this package writes: rectangles, polylines, pins, wires,
// labels, no-connect flags, texts and the title block), so the picture is
// drawn from the very file a builder opens.
func SVG(src []byte) ([]byte, error) {
	root, err := ParseExpr(string(src))
	if err != nil {
		return nil, err
	}
	if root.Head() != "kicad_sch" {
		return nil, fmt.Errorf("kicad: not a schematic (starts with %q)", root.Head())
	}
	paper := root.Child("paper")
	w, h := 420.0, 297.0
	switch paper.Arg(0) {
	case "User":
		w, h = num(paper.Arg(1)), num(paper.Arg(2))
	default:
		for _, p := range papers {
			if p.name == paper.Arg(0) {
				w, h = float64(p.w)/100, float64(p.h)/100
			}
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%gmm" height="%gmm" viewBox="0 0 %g %g" font-family="sans-serif">`+"\n", w, h, w, h)
	fmt.Fprintf(&b, `<rect width="%g" height="%g" fill="#fffff8"/>`+"\n", w, h)
	fmt.Fprintf(&b, `<rect x="10" y="10" width="%g" height="%g" fill="none" stroke="#840000" stroke-width="0.25"/>`+"\n", w-20, h-20)
	lib := map[string]*Expr{}
	for _, s := range root.Child("lib_symbols").Children("symbol") {
		lib[s.Arg(0)] = s
	}
	for _, e := range root.List {
		switch e.Head() {
		case "wire":
			pts := e.Child("pts").Children("xy")
			fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#008400" stroke-width="0.15"/>`+"\n", pts[0].Arg(0), pts[0].Arg(1), pts[1].Arg(0), pts[1].Arg(1))
		case "polyline":
			var pts []string
			for _, xy := range e.Child("pts").Children("xy") {
				pts = append(pts, xy.Arg(0)+","+xy.Arg(1))
			}
			fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="#840084" stroke-width="0.2" stroke-dasharray="2,1"/>`+"\n", strings.Join(pts, " "))
		case "no_connect":
			at := e.Child("at")
			x, y := num(at.Arg(0)), num(at.Arg(1))
			fmt.Fprintf(&b, `<path d="M%g %gL%g %gM%g %gL%g %g" stroke="#0000c8" stroke-width="0.2"/>`+"\n", x-0.6, y-0.6, x+0.6, y+0.6, x-0.6, y+0.6, x+0.6, y-0.6)
		case "label":
			at := e.Child("at")
			text(&b, e.Arg(0), num(at.Arg(0)), num(at.Arg(1)), num(at.Arg(2)), justify(e), 1.27, "#008484", false, -0.3)
		case "text":
			at := e.Child("at")
			text(&b, e.Arg(0), num(at.Arg(0)), num(at.Arg(1)), num(at.Arg(2)), justify(e), size(e), "#840084", true, 0)
		case "symbol":
			drawSymbol(&b, e, lib[e.Child("lib_id").Arg(0)])
		}
	}
	if tb := root.Child("title_block"); tb != nil {
		x, y := w-10-110, h-10-20
		fmt.Fprintf(&b, `<rect x="%g" y="%g" width="110" height="20" fill="none" stroke="#840000" stroke-width="0.25"/>`+"\n", x, y)
		text(&b, tb.Child("title").Arg(0), x+2, y+7, 0, "left", 3, "#000000", true, 0)
		text(&b, "Rev "+tb.Child("rev").Arg(0)+"   "+tb.Child("company").Arg(0), x+2, y+12, 0, "left", 1.5, "#000000", false, 0)
		for i, c := range tb.Children("comment") {
			text(&b, c.Arg(1), x+2, y+15.5+float64(i)*2.2, 0, "left", 1.1, "#000000", false, 0)
		}
	}
	b.WriteString("</svg>\n")
	return b.Bytes(), nil
}

func num(s string) float64 {
	var f float64
	fmt.Sscan(s, &f)
	return f
}

func justify(e *Expr) string {
	if eff := e.Child("effects"); eff != nil {
		if j := eff.Child("justify"); j != nil {
			return j.Arg(0)
		}
	}
	return ""
}

func size(e *Expr) float64 {
	if eff := e.Child("effects"); eff != nil {
		if f := eff.Child("font"); f != nil {
			if s := f.Child("size"); s != nil {
				return num(s.Arg(0))
			}
		}
	}
	return 1.27
}

func hidden(e *Expr) bool {
	if eff := e.Child("effects"); eff != nil {
		for _, c := range eff.List {
			if c.Atom == "hide" {
				return true
			}
		}
	}
	for _, c := range e.List {
		if c.Atom == "hide" {
			return true
		}
	}
	return false
}

// text writes s at (x, y) rotated by angle degrees (counter-clockwise);
// ~{...} is drawn with an overbar, as KiCad does.
func text(b *bytes.Buffer, s string, x, y, angle float64, just string, size float64, colour string, bold bool, lift float64) {
	anchor := map[string]string{"left": "start", "right": "end"}[just]
	if anchor == "" {
		anchor = "middle"
	}
	if angle == 180 {
		angle = 0
		anchor = map[string]string{"start": "end", "end": "start", "middle": "middle"}[anchor]
		if just == "" {
			anchor = "middle"
		}
	}
	if angle == 270 {
		angle = 90
		anchor = map[string]string{"start": "end", "end": "start", "middle": "middle"}[anchor]
	}
	weight := ""
	if bold {
		weight = ` font-weight="bold"`
	}
	var body strings.Builder
	for s != "" {
		i := strings.Index(s, "~{")
		if i < 0 {
			body.WriteString(html.EscapeString(s))
			break
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			body.WriteString(html.EscapeString(s))
			break
		}
		body.WriteString(html.EscapeString(s[:i]))
		fmt.Fprintf(&body, `<tspan text-decoration="overline">%s</tspan>`, html.EscapeString(s[i+2:i+j]))
		s = s[i+j+1:]
	}
	fmt.Fprintf(b, `<text x="0" y="%g" font-size="%g" fill="%s" text-anchor="%s"%s transform="translate(%g %g) rotate(%g)">%s</text>`+"\n",
		lift, size*1.3, colour, anchor, weight, x, y, -angle, body.String())
}

// drawSymbol draws a placed symbol from its library drawing.
func drawSymbol(b *bytes.Buffer, inst, def *Expr) {
	at := inst.Child("at")
	ox, oy, rot := num(at.Arg(0)), num(at.Arg(1)), num(at.Arg(2))
	tf := func(x, y float64) (float64, float64) {
		r := rot * math.Pi / 180
		c, s := math.Round(math.Cos(r)), math.Round(math.Sin(r))
		return ox + x*c - y*s, oy - (x*s + y*c)
	}
	for _, unit := range def.Children("symbol") {
		for _, g := range unit.List {
			switch g.Head() {
			case "rectangle":
				x1, y1 := tf(num(g.Child("start").Arg(0)), num(g.Child("start").Arg(1)))
				x2, y2 := tf(num(g.Child("end").Arg(0)), num(g.Child("end").Arg(1)))
				fmt.Fprintf(b, `<rect x="%g" y="%g" width="%g" height="%g" fill="#ffffc2" stroke="#840000" stroke-width="0.254"/>`+"\n",
					math.Min(x1, x2), math.Min(y1, y2), math.Abs(x2-x1), math.Abs(y2-y1))
			case "polyline":
				var pts []string
				for _, xy := range g.Child("pts").Children("xy") {
					x, y := tf(num(xy.Arg(0)), num(xy.Arg(1)))
					pts = append(pts, fmt.Sprintf("%g,%g", x, y))
				}
				fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="#840000" stroke-width="0.2"/>`+"\n", strings.Join(pts, " "))
			case "pin":
				if hidden(g) {
					continue
				}
				pa := g.Child("at")
				px, py, pang := num(pa.Arg(0)), num(pa.Arg(1)), num(pa.Arg(2))
				l := num(g.Child("length").Arg(0))
				dx, dy := math.Round(math.Cos(pang*math.Pi/180)), math.Round(math.Sin(pang*math.Pi/180))
				x1, y1 := tf(px, py)
				x2, y2 := tf(px+dx*l, py+dy*l)
				fmt.Fprintf(b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#840000" stroke-width="0.15"/>`+"\n", x1, y1, x2, y2)
				vertical := x1 == x2
				ang := 0.0
				if vertical {
					ang = 90
				}
				mx, my := (x1+x2)/2, (y1+y2)/2
				text(b, g.Child("number").Arg(0), mx, my, ang, "", 1.0, "#a00000", false, -0.3)
				if name := g.Child("name").Arg(0); name != "~" && !hiddenNames(def) {
					nx, ny := tf(px+dx*(l+0.8), py+dy*(l+0.8))
					just := "left"
					if (x2 < x1) || (vertical && y2 > y1) {
						just = "right"
					}
					if vertical {
						ang = 90
					}
					text(b, name, nx, ny, ang, just, 1.1, "#008484", false, 0.5)
				}
			}
		}
	}
	for _, p := range inst.Children("property") {
		if hidden(p) {
			continue
		}
		pa := p.Child("at")
		text(b, p.Arg(1), num(pa.Arg(0)), num(pa.Arg(1)), 0, justify(p), 1.27, "#000084", false, 0)
	}
}

func hiddenNames(def *Expr) bool {
	pn := def.Child("pin_names")
	return pn != nil && hidden(pn)
}
