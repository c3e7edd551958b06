package hw

import (
	"fmt"

	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/lpt/gpiomap"
)

// PiAdapterName is the name of the Raspberry Pi adapter board.
const PiAdapterName = "TTL_PAPERS Raspberry Pi adapter"

// Nets of the Pi adapter beyond the port lines.
const (
	NetPi3V3 = "+3V3" // the Pi's 3.3 V, which powers the level shifter
)

// PiNet is the name of the Pi-side net of a board-to-Pi line, after the
// level shifter.
func PiNet(line string) string { return line + "_3V3" }

// PiAdapter is the board that gives a Raspberry Pi a printer port for one
// PE: a DB-25 socket wired, as gpiomap.RaspberryPi maps them, to the
// Pi's 40-pin header. The twelve Pi→board lines run straight (74LS inputs
// read the Pi's 3.3 V as high); the five board→Pi lines go through a
// 74LVC245 on the Pi's 3.3 V, whose 5 V-tolerant inputs take the 74LS
// outputs and whose outputs never exceed 3.3 V (docs/hardware.md). The
// adapter takes no power from the board; it serves PEs = 1.
func PiAdapter() (*Netlist, error) {
	header, err := gpiomap.RaspberryPi.HeaderPins()
	if err != nil {
		return nil, err
	}
	b := &Netlist{
		PEs: 1, Name: PiAdapterName, Revision: Revision,
		byRef: map[string]*Component{}, byNode: map[Node]*Net{}, netName: map[string]*Net{}, pools: map[string]*pool{},
	}
	j := b.add(ConnectorRef(0), DB25Socket, "cable", "printer port")
	h := b.add("J2", PiHeader40, "host", "ribbon to the Raspberry Pi's 40-pin header")
	u := b.chip(LVC245, "shift", "level shifter: board outputs (5 V) to Pi inputs (3.3 V)")
	a := 2 // next free A input (pins 2-9); its B output is pin 20-a
	for i, l := range lpt.Lines {
		if header[i] == 0 {
			continue
		}
		if l.Output() {
			b.connect(l.Name, Node{j.Ref, l.Pin}, Node{h.Ref, header[i]})
			continue
		}
		b.connect(l.Name, Node{j.Ref, l.Pin}, Node{u.Ref, a})
		b.connect(PiNet(l.Name), Node{u.Ref, 20 - a}, Node{h.Ref, header[i]})
		a++
	}
	if a > 10 {
		panic(fmt.Sprintf("hw: %d board outputs, more than the 74LVC245's 8", a-2))
	}
	for ; a <= 9; a++ {
		b.connect(GND, Node{u.Ref, a}) // unused inputs held low
	}
	for _, p := range lpt.GroundPins {
		b.connect(GND, Node{j.Ref, p})
	}
	for _, p := range gpiomap.PiGround {
		b.connect(GND, Node{h.Ref, p})
	}
	for _, p := range gpiomap.Pi3V3 {
		b.connect(NetPi3V3, Node{h.Ref, p})
	}
	b.connect(NetPi3V3, Node{u.Ref, 20}, Node{u.Ref, 1}) // supply; DIR high: A to B
	b.connect(GND, Node{u.Ref, 10}, Node{u.Ref, 19})     // ground; outputs enabled
	c := b.add("C1", Cap100n, "power", "decoupling for "+u.Ref)
	c.Decouples = u
	b.connect(NetPi3V3, Node{c.Ref, 1})
	b.connect(GND, Node{c.Ref, 2})
	return b, nil
}
