package vcd

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/ttlpapers/ttlpapers/internal/axis"
)

// Plot says what SVG draws: some signals of a file over a time window.
type Plot struct {
	Title    string
	From, To int64 // the window, in the file's time units
	Rows     []Row
	Marks    []Mark
	Width    int // pixels; 0 means 900
	// Origin is the time the axis counts from, and Axis its caption
	// (default "time (ns)", in the file's unit).
	Origin int64
	Axis   string
}

// Row is one waveform: the signal at Path, labelled Label (the path when
// empty).
type Row struct {
	Label, Path string
}

// Mark is a labelled vertical line across every row, e.g. the instant a PE
// read its status register.
type Mark struct {
	T     int64
	Label string
}

const (
	rowHeight = 30
	labelW    = 190
	topMargin = 58 // the title, and two lines of mark labels
	axisH     = 40
)

// SVG draws p as an SVG picture: one row per signal (a line for one-bit
// signals, boxes with hexadecimal values for vectors, arrows for events,
// grey for unknown), a time axis in the file's unit, and the marks.
func (f *File) SVG(w io.Writer, p Plot) error {
	if p.To <= p.From {
		return fmt.Errorf("vcd: plot window %d to %d is empty", p.From, p.To)
	}
	sigs := make([]*Signal, len(p.Rows))
	for i, r := range p.Rows {
		if sigs[i] = f.Signal(r.Path); sigs[i] == nil {
			return fmt.Errorf("vcd: plot row %q: no signal %s in the file", r.Label, r.Path)
		}
	}
	if p.Width == 0 {
		p.Width = 900
	}
	d := &drawing{w: bufio.NewWriter(w), p: p, plotW: float64(p.Width - labelW - 20)}
	height := topMargin + len(p.Rows)*rowHeight + axisH
	d.printf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", p.Width, height, p.Width, height)
	d.printf(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	d.printf(`<text x="10" y="20" font-size="14" font-weight="bold">%s</text>`+"\n", html.EscapeString(p.Title))
	for i, s := range sigs {
		d.row(i, p.Rows[i], s)
	}
	if p.Axis == "" {
		p.Axis = "time (" + strings.TrimPrefix(f.Timescale.String(), "1") + ")"
	}
	d.axis(topMargin+len(p.Rows)*rowHeight, p.Axis)
	for i, m := range p.Marks {
		d.mark(m, height, topMargin-6-14*(i%2))
	}
	d.printf("</svg>\n")
	if d.err == nil {
		d.err = d.w.Flush()
	}
	return d.err
}

type drawing struct {
	w     *bufio.Writer
	err   error
	p     Plot
	plotW float64
}

func (d *drawing) printf(format string, args ...any) {
	if d.err == nil {
		_, d.err = fmt.Fprintf(d.w, format, args...)
	}
}

// x is the horizontal position of time t, clamped to the window.
func (d *drawing) x(t int64) float64 {
	t = max(d.p.From, min(d.p.To, t))
	return labelW + float64(t-d.p.From)/float64(d.p.To-d.p.From)*d.plotW
}

// segments returns the values over the window: the value at From, then
// each change inside it.
func (d *drawing) segments(s *Signal) []Change {
	segs := []Change{{d.p.From, s.At(d.p.From)}}
	for _, c := range s.Changes {
		if c.T > d.p.From && c.T <= d.p.To {
			segs = append(segs, c)
		}
	}
	return segs
}

func (d *drawing) row(i int, r Row, s *Signal) {
	y0 := float64(topMargin + i*rowHeight)
	hi, lo, mid := y0+6, y0+rowHeight-8, y0+rowHeight/2-1
	label := r.Label
	if label == "" {
		label = r.Path
	}
	d.printf(`<text x="10" y="%.1f">%s</text>`+"\n", mid+4, html.EscapeString(label))
	d.printf(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eee"/>`+"\n", labelW, lo+4, d.p.Width-20, lo+4)
	segs := d.segments(s)
	switch {
	case s.Type == "event":
		for _, c := range segs[1:] {
			x := d.x(c.T)
			d.printf(`<path d="M%.1f %.1f V%.1f M%.1f %.1f L%.1f %.1f L%.1f %.1f" stroke="#c00" fill="none" stroke-width="1.5"/>`+"\n", x, lo, hi, x-4, hi+6, x, hi, x+4, hi+6)
		}
	case s.Width == 1:
		d.bits(segs, hi, lo)
	default:
		d.vector(segs, hi, lo, mid)
	}
}

// bits draws a one-bit signal: a line high or low, grey where unknown.
func (d *drawing) bits(segs []Change, hi, lo float64) {
	var path strings.Builder
	for i, c := range segs {
		x0, x1 := d.x(c.T), d.x(d.p.To)
		if i+1 < len(segs) {
			x1 = d.x(segs[i+1].T)
		}
		switch c.V {
		case "0", "1":
			y := lo
			if c.V == "1" {
				y = hi
			}
			if path.Len() == 0 {
				fmt.Fprintf(&path, "M%.1f %.1f", x0, y)
			} else {
				fmt.Fprintf(&path, " L%.1f %.1f", x0, y)
			}
			fmt.Fprintf(&path, " L%.1f %.1f", x1, y)
		default:
			d.printf(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#ccc"/>`+"\n", x0, hi, x1-x0, lo-hi)
			if path.Len() > 0 {
				d.printf(`<path d="%s" stroke="#06c" fill="none" stroke-width="1.5"/>`+"\n", path.String())
				path.Reset()
			}
		}
	}
	if path.Len() > 0 {
		d.printf(`<path d="%s" stroke="#06c" fill="none" stroke-width="1.5"/>`+"\n", path.String())
	}
}

// vector draws a multi-bit signal as boxes with the value in hexadecimal.
func (d *drawing) vector(segs []Change, hi, lo, mid float64) {
	for i, c := range segs {
		x0, x1 := d.x(c.T), d.x(d.p.To)
		if i+1 < len(segs) {
			x1 = d.x(segs[i+1].T)
		}
		fill := "#eef4ff"
		text := "x"
		if v, err := strconv.ParseUint(c.V, 2, 64); err == nil {
			text = fmt.Sprintf("%02x", v)
		} else {
			fill = "#ccc"
		}
		s := math.Min(3, (x1-x0)/2)
		d.printf(`<path d="M%.1f %.1f L%.1f %.1f L%.1f %.1f L%.1f %.1f L%.1f %.1f L%.1f %.1f Z" stroke="#06c" fill="%s"/>`+"\n",
			x0, mid, x0+s, hi, x1-s, hi, x1, mid, x1-s, lo, x0+s, lo, fill)
		if x1-x0 > 18 {
			d.printf(`<text x="%.1f" y="%.1f" text-anchor="middle" font-size="11">%s</text>`+"\n", (x0+x1)/2, mid+4, text)
		}
	}
}

// axis draws the time axis with round ticks.
func (d *drawing) axis(y int, caption string) {
	d.printf(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", labelW, y, d.p.Width-20, y)
	step := max(1, axis.Step(float64(d.p.To-d.p.From)/8))
	o := float64(d.p.Origin)
	for t := math.Ceil((float64(d.p.From)-o)/step)*step + o; t <= float64(d.p.To); t += step {
		x := d.x(int64(t))
		d.printf(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="black"/>`+"\n", x, y, x, y+5)
		d.printf(`<text x="%.1f" y="%d" text-anchor="middle" font-size="11">%s</text>`+"\n", x, y+18, strconv.FormatFloat(t-o, 'f', -1, 64))
	}
	d.printf(`<text x="%d" y="%d" text-anchor="end" font-size="11">%s</text>`+"\n", d.p.Width-20, y+34, html.EscapeString(caption))
}

// mark draws a mark's line, with its label at height y.
func (d *drawing) mark(m Mark, height, y int) {
	if m.T < d.p.From || m.T > d.p.To {
		return
	}
	x := d.x(m.T)
	d.printf(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#c00" stroke-dasharray="4 3"/>`+"\n", x, y+2, x, height-axisH)
	anchor := "start"
	if x > float64(d.p.Width)*0.6 {
		anchor, x = "end", x-6 // keep a late mark's label inside the picture
	}
	d.printf(`<text x="%.1f" y="%d" fill="#c00" font-size="11" text-anchor="%s">%s</text>`+"\n", x+3, y, anchor, html.EscapeString(m.Label))
}
