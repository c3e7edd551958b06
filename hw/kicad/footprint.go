package kicad

import "strconv"

// um is a length on the board in micrometres: KiCad's footprints put pads
// on 0.001 mm positions (the DB-25's second row is offset by 1.385 mm).
type um int

func (u um) String() string { return strconv.FormatFloat(float64(u)/1000, 'f', -1, 64) }

// fpPad is one pad of a footprint, relative to the footprint's origin
// (pad 1, as in KiCad's libraries).
type fpPad struct {
	Num         string // "0": a mounting hole, on no net
	X, Y        um
	Shape       string // rect, roundrect or circle
	Size, Drill um
	// RRatio is a roundrect's corner radius over its size, as the library
	// gives it.
	RRatio string
}

// footprintDef is the geometry of one library footprint: its pads and its
// courtyard (the room it needs on the board).
type footprintDef struct {
	Pads           []fpPad
	X0, Y0, X1, Y1 um // courtyard, relative to the origin
	// Edge, for a connector that mounts on the board's edge, is where that
	// edge runs (Y, relative to the origin); the housing overhangs it.
	Edge um
}

// footprintDefs are the pads of the KiCad library footprints the hw parts
// name, copied by hand from KiCad 9's libraries so the generator needs no
// KiCad install; TestFootprintPadsMatchKiCadLibrary checks them against
// the library when it is installed.
var footprintDefs = map[string]*footprintDef{
	"Package_DIP:DIP-14_W7.62mm": dip(14, 16760),
	"Package_DIP:DIP-20_W7.62mm": dip(20, 24380),
	"Connector_Dsub:DSUB-25_Pins_Horizontal_P2.77x2.84mm_EdgePinOffset7.70mm_Housed_MountingHolesOffset9.12mm": {
		Pads: append(append(
			[]fpPad{{"0", -6930, 1420, "circle", 4000, 3200, ""}, {"0", 40170, 1420, "circle", 4000, 3200, ""}}, // mounting holes
			padRow{1, 13, 0, 0, 2770, 1600, 1000, "rect", "circle", ""}.pads()...),
			padRow{14, 12, 1385, 2840, 2770, 1600, 1000, "circle", "circle", ""}.pads()...),
		X0: -10430, Y0: -2310, X1: 43670, Y1: 17440,
		Edge: 7700, // the name's EdgePinOffset7.70mm
	},
	"Connector_Dsub:DSUB-25_Socket_Horizontal_P2.77x2.84mm_EdgePinOffset7.70mm_Housed_MountingHolesOffset9.12mm": {
		Pads: append(append(
			[]fpPad{{"0", -40170, 1420, "circle", 4000, 3200, ""}, {"0", 6930, 1420, "circle", 4000, 3200, ""}}, // mounting holes
			padRow{1, 13, 0, 0, -2770, 1600, 1000, "rect", "circle", ""}.pads()...),
			padRow{14, 12, -1385, 2840, -2770, 1600, 1000, "circle", "circle", ""}.pads()...),
		X0: -43670, Y0: -2310, X1: 10430, Y1: 17610,
		Edge: 7700,
	},
	"Connector_PinHeader_2.54mm:PinHeader_2x20_P2.54mm_Vertical": {
		Pads: func() []fpPad {
			var pads []fpPad
			for i := range 40 {
				shape := "circle"
				if i == 0 {
					shape = "rect"
				}
				pads = append(pads, fpPad{strconv.Itoa(i + 1), um(i%2) * 2540, um(i/2) * 2540, shape, 1700, 1000, ""})
			}
			return pads
		}(),
		X0: -1770, Y0: -1780, X1: 4320, Y1: 50030,
	},
	"LED_THT:LED_D5.0mm-3":                       {padRow{1, 3, 0, 0, 2540, 1800, 900, "rect", "circle", ""}.pads(), -1150, -3210, 6230, 3210, 0},
	"LED_THT:LED_D5.0mm":                         {padRow{1, 2, 0, 0, 2540, 1800, 900, "rect", "circle", ""}.pads(), -1950, -3210, 4490, 3210, 0},
	"Capacitor_THT:C_Disc_D5.0mm_W2.5mm_P5.00mm": {padRow{1, 2, 0, 0, 5000, 1600, 800, "circle", "circle", ""}.pads(), -1050, -1500, 6050, 1500, 0},
	"Capacitor_THT:CP_Radial_D5.0mm_P2.00mm":     {padRow{1, 2, 0, 0, 2000, 1600, 800, "roundrect", "circle", "0.15625"}.pads(), -1750, -2750, 3750, 2750, 0},
	"TerminalBlock_Phoenix:TerminalBlock_Phoenix_MKDS-1,5-2-5.08_1x02_P5.08mm_Horizontal": {
		padRow{1, 2, 0, 0, 5080, 2600, 1300, "roundrect", "circle", "0.096154"}.pads(), -3040, -5710, 8130, 5100, 0},
	"Resistor_THT:R_Axial_DIN0207_L6.3mm_D2.5mm_P10.16mm_Horizontal": {
		padRow{1, 2, 0, 0, 10160, 1600, 800, "circle", "circle", ""}.pads(), -1050, -1500, 11210, 1500, 0},
	"Fuse:Fuse_Bourns_MF-RHT100": polyfuse(1710, 710, -2300, 7400),
	"Fuse:Fuse_Bourns_MF-RHT200": polyfuse(1710, 710, -2150, 7250),
	"Fuse:Fuse_Bourns_MF-RHT500": polyfuse(2010, 1010, -3050, 8150),
	"Package_TO_SOT_THT:TO-220-2_Vertical": {
		padRow{1, 2, 0, 0, 5080, 2000, 1100, "rect", "circle", ""}.pads(), -2710, -3400, 7790, 1500, 0},
	"Connector_IDC:IDC-Header_2x13_P2.54mm_Vertical": {
		Pads: func() []fpPad {
			var pads []fpPad
			for i := range 26 {
				shape, ratio := "circle", ""
				if i == 0 {
					shape, ratio = "roundrect", "0.147059"
				}
				pads = append(pads, fpPad{strconv.Itoa(i + 1), um(i%2) * 2540, um(i/2) * 2540, shape, 1700, 1000, ratio})
			}
			return pads
		}(),
		X0: -3680, Y0: -5600, X1: 6220, Y1: 36080,
	},
}

// dip is a dual in-line package, 0.3" wide: pins down the left side, back
// up the right; bottom is the courtyard's lower edge.
func dip(pins int, bottom um) *footprintDef {
	d := &footprintDef{X0: -1060, Y0: -1520, X1: 8670, Y1: bottom}
	for i := range pins {
		x, y := um(0), um(i)*2540
		if i >= pins/2 {
			x, y = 7620, um(pins-1-i)*2540
		}
		shape, ratio := "circle", ""
		if i == 0 {
			shape, ratio = "roundrect", "0.15625"
		}
		d.Pads = append(d.Pads, fpPad{strconv.Itoa(i + 1), x, y, shape, 1600, 800, ratio})
	}
	return d
}

// polyfuse is a Bourns MF-RHT radial fuse: its second lead 5.1 mm along
// the disc and 1.2 mm across it; x0 and x1 bound the courtyard, which
// grows with the disc.
func polyfuse(size, drill, x0, x1 um) *footprintDef {
	return &footprintDef{Pads: []fpPad{{"1", 0, 0, "circle", size, drill, ""}, {"2", 5100, 1200, "circle", size, drill, ""}},
		X0: x0, Y0: -900, X1: x1, Y1: 2100}
}

// padRow is a row of n pads numbered from first, pitch apart along X from
// (x0, y); the first pad has its own shape (the pin-1 mark).
type padRow struct {
	first, n                  int
	x0, y, pitch, size, drill um
	firstShape, shape         string
	firstRRatio               string
}

func (r padRow) pads() []fpPad {
	var out []fpPad
	for i := range r.n {
		s, ratio := r.shape, ""
		if i == 0 {
			s, ratio = r.firstShape, r.firstRRatio
		}
		out = append(out, fpPad{strconv.Itoa(r.first + i), r.x0 + um(i)*r.pitch, r.y, s, r.size, r.drill, ratio})
	}
	return out
}

// Board layout: each functional group a title over rows of footprints.
const (
	fpGap    um = 2540
	titleH   um = 6350
	boardAt  um = 20000 // the board's top left corner on the page
	edgeSpan um = 5000  // board edge beyond the outermost courtyard
	// idcGap is the room between two IDC headers: each header's 17
	// signals leave it along its sides, 16 tracks a gap.
	idcGap um = 4 * fpGap
)

// Mounting holes: an M3 hole in each corner, holeIn from both edges, and
// no copper nearer its centre than holeKeep (an M3 screw head or washer
// is 7 mm across); no part within holeRoom of the corner.
const (
	holeFootprint    = "MountingHole:MountingHole_3.2mm_M3"
	holeIn        um = 4000
	holeKeep      um = 3600
	holeRoom      um = 8900
)
