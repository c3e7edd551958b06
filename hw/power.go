package hw

import "fmt"

// NetVIn is the supply as it enters, between the power terminal and its
// fuse.
const NetVIn = "VIN"

// Resettable fuses (Bourns MF-RHT, radial, 16 V), the smallest of the
// series that holds a board's most drawn current half again and costs at
// most 100 mV of the DC check's 150 at that current (PowerFuse). Hold and
// R1max at 23 °C are the datasheet's.
var (
	Fuse100 = polyfuse("MF-RHT100", 1.0, 1.8, 0.43)
	Fuse200 = polyfuse("MF-RHT200", 2.0, 3.8, 0.110)
	Fuse500 = polyfuse("MF-RHT500", 5.0, 9.0, 0.045)
)

// SchottkyIn is the reverse-polarity protection: a Schottky rectifier from
// GND to VCC after the fuse, reverse-biased (no drop) in use. A supply
// connected backwards drives it forward: it holds the board's supply
// within a Schottky's drop of ground, below the forward voltage of the
// chips' substrate junctions, until the fuse trips or the supply limits.
// 10 A average and 150 A surge: more than any fuse here trips at.
var SchottkyIn = buy(twoPin("MBR1045", "Schottky rectifier, 45 V, 10 A, TO-220AC, standing: reverse-polarity clamp after the fuse, cathode (tab, pad 1) on VCC", "K", "A", "Device:D_Schottky", "Package_TO_SOT_THT:TO-220-2_Vertical"),
	"onsemi", "MBR1045G", "C79734")

// protection are the input's parts, for the part library (Passives).
var protection = []*Part{Fuse100, Fuse200, Fuse500, SchottkyIn}

// powerFuse is each board's fuse: with the most drawn at 74LS maximum
// currents, 195, 410, 884 and 1724 mA, R1max costs 84, 45, 97 and 78 mV.
var powerFuse = map[int]*Part{4: Fuse100, 8: Fuse200, 16: Fuse200, 32: Fuse500}

// PowerFuse is the fuse at the power input of a board of pes PEs (a size
// from Sizes).
func PowerFuse(pes int) *Part { return powerFuse[pes] }

func polyfuse(model string, hold, trip, rmax float64) *Part {
	p := buy(twoPin(fmt.Sprintf("%gA polyfuse", hold),
		fmt.Sprintf("resettable fuse (PPTC), 16 V, hold %g A, trip %g A, R1max %g Ω, radial: the 5 V input's fuse", hold, trip, rmax),
		"~", "~", "Device:Polyfuse", "Fuse:Fuse_Bourns_"+model), "Bourns", model+"-0")
	p.Hold, p.RMax = hold, rmax
	return p
}

// bulkPer is how many chips share one 10 µF bulk capacitor, placed in
// the functional group of the middle one: the decoupling capacitors feed a
// chip's switching edges, the bulk ones refill them over a burst of
// switching, and the input's capacitor is too far from most chips on the
// larger boards.
const bulkPer = 8

// powerInput wires the supply's way in, its parts placed in this order
// beside terminal j so that the unfused copper stays short: the
// terminal's +5 V pin through the fuse onto VCC, the Schottky clamp from
// GND to VCC, and a bulk capacitor there. c and d are the references of
// the capacitor and the diode.
func (b *Netlist) powerInput(j *Component, c, d string) {
	f := b.add("F1", PowerFuse(b.PEs), "power", "input fuse")
	b.connect(NetVIn, Node{j.Ref, 1}, Node{f.Ref, 1})
	b.connect(VCC, Node{f.Ref, 2})
	clamp := b.add(d, SchottkyIn, "power", "reverse-polarity clamp")
	b.connect(VCC, Node{clamp.Ref, 1})
	b.connect(GND, Node{clamp.Ref, 2})
	b.bulk(c, "power", "bulk capacitor at the power input")
}

// bulkCaps adds one bulk capacitor for each bulkPer chips, in reference
// order, numbered from C<next>.
func (b *Netlist) bulkCaps(chips []*Component, next int) {
	for i := 0; i < len(chips); i += bulkPer {
		set := chips[i:min(i+bulkPer, len(chips))]
		b.bulk(fmt.Sprintf("C%d", next), set[len(set)/2].Group, fmt.Sprintf("bulk capacitor for %s-%s", set[0].Ref, set[len(set)-1].Ref))
		next++
	}
}

func (b *Netlist) bulk(ref, group, role string) {
	c := b.add(ref, Cap10u, group, role)
	b.connect(VCC, Node{c.Ref, 1})
	b.connect(GND, Node{c.Ref, 2})
}
