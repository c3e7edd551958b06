package kicad

import (
	"bytes"
	"fmt"

	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// CableFile is the cable drawing's path under kicad/.
const CableFile = "cable/idc26-db25.svg"

// cableLine is what DB-25 pin db carries, as the drawing labels it.
func cableLine(db int) string {
	if l, ok := lpt.LineByPin(db); ok {
		return l.Name
	}
	return "GND"
}

// CableSVG draws the IDC-26 to DB-25 cable of the 16- and 32-PE boards
// (hw.RibbonPin): the flat ribbon's 26 wires, each with the header pin
// and the DB-25 pin it is crimped to and the line it carries, wire 1 (the
// ribbon's marked edge) red, and both connectors' faces as seen from the
// side that mates, pin 1 marked.
func CableSVG() []byte {
	const (
		pitch  = 16  // between wires
		top    = 170 // the first wire's y
		left   = 40  // the header's end of the ribbon
		right  = 560 // the DB-25's end
		width  = 640
		height = top + 26*pitch + 30
	)
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	b.WriteString(`<text x="20" y="22" font-size="14">IDC-26 to DB-25 cable (AT pinout): flat ribbon, wire k on header pin k</text>` + "\n")
	cableFaces(&b)
	fmt.Fprintf(&b, `<text x="%d" y="%d">header pin</text><text x="%d" y="%d" text-anchor="end">DB-25 pin</text><text x="300" y="%d" text-anchor="middle">line</text>`+"\n",
		left-20, top-22, right+60, top-22, top-22)
	for wire := 1; wire <= 26; wire++ {
		cableWire(&b, wire, top+(wire-1)*pitch, left, right)
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

// cableFaces draws both connectors' faces, as seen from the side that
// mates, so that a builder can find pin 1 on the parts in hand.
func cableFaces(b *bytes.Buffer) {
	// The header's face: two rows of 13, odd pins in one row; a boxed
	// header's key sits in the middle of the odd row's side.
	b.WriteString(`<text x="20" y="48">IDC-26 socket, mating face (on the board's header)</text>` + "\n")
	b.WriteString(`<rect x="20" y="56" width="240" height="56" fill="none" stroke="black"/>` + "\n")
	for p := 1; p <= 26; p++ {
		x, y := 32+(p-1)/2*17, 72
		if p%2 == 0 {
			y = 92
		}
		face(b, x, y, p)
	}
	// The DB-25 plug's face: 13 pins above, 12 below, pin 1 at the left.
	b.WriteString(`<text x="330" y="48">DB-25 male plug, mating face (into the PC's port)</text>` + "\n")
	b.WriteString(`<path d="M330 56 H610 L596 112 H344 Z" fill="none" stroke="black"/>` + "\n")
	for p := 1; p <= 25; p++ {
		x, y := 346+(p-1)*20, 72
		if p > 13 {
			x, y = 356+(p-14)*20, 92
		}
		face(b, x, y, p)
	}
}

// cableWire draws ribbon wire number wire at height y, from the header's
// end (left) to the DB-25's (right): the DB-25 pin it is crimped to and
// the line it carries, or "cut" where no pin takes it; wire 1 is red, as
// the ribbon's marked edge is.
func cableWire(b *bytes.Buffer, wire, y, left, right int) {
	colour, label := "#555", "not connected"
	db := 0
	for n := 1; n <= 25; n++ {
		if hw.RibbonPin(n) == wire {
			db = n
		}
	}
	if db > 0 {
		label = cableLine(db)
	}
	if wire == 1 {
		colour = "#d00"
	}
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="3"/>`+"\n", left+30, y, right, y, colour)
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="end">%d</text>`+"\n", left+20, y+4, wire)
	fmt.Fprintf(b, `<rect x="260" y="%d" width="80" height="12" fill="white"/><text x="300" y="%d" text-anchor="middle">%s</text>`+"\n", y-6, y+4, label)
	if db > 0 {
		fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="end">%d</text>`+"\n", right+40, y+4, db)
	} else {
		fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="end">cut</text>`+"\n", right+40, y+4)
	}
}

// face draws one pin of a connector's face at (x, y), its number above
// it on the upper row and below it on the lower, pin 1 filled.
func face(b *bytes.Buffer, x, y, pin int) {
	fill, ty := "none", y-7
	if pin == 1 {
		fill = "black"
	}
	if y > 80 {
		ty = y + 14
	}
	fmt.Fprintf(b, `<circle cx="%d" cy="%d" r="4" fill="%s" stroke="black"/><text x="%d" y="%d" font-size="8" text-anchor="middle">%d</text>`+"\n", x, y, fill, x, ty, pin)
}
