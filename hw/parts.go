package hw

import (
	"fmt"
	"time"
)

// PinType is the electrical role of a part pin.
type PinType uint8

const (
	PinInput PinType = iota
	PinOutput
	PinTriState // output with an enable
	PinPower
	PinGround
	PinNC      // not connected inside the part
	PinPassive // connector contacts, passives
)

func (t PinType) String() string {
	if names := [...]string{"input", "output", "tri_state", "power_in", "ground", "no_connect", "passive"}; int(t) < len(names) {
		return names[t]
	}
	return fmt.Sprintf("PinType(%d)", uint8(t))
}

// Pin is one pin of a part, numbered as on the datasheet.
type Pin struct {
	Num  int
	Name string
	Type PinType
}

// Func is the logic function of a part unit.
type Func uint8

const (
	FuncNAND   Func = iota // output = NOT(AND of inputs)
	FuncOR                 // output = OR of inputs
	FuncBuffer             // tri-state buffer: output = input while enabled
	FuncDFF                // 74LS74 half: D flip-flop with async preset/clear
)

func (f Func) String() string {
	if names := [...]string{"NAND", "OR", "buffer", "D flip-flop"}; int(f) < len(names) {
		return names[f]
	}
	return fmt.Sprintf("Func(%d)", uint8(f))
}

// DFFState is a 74LS74 half's memory: Q, and the clock level it last saw
// (a rising edge is a clock seen low, now high).
type DFFState struct{ Q, Clk bool }

// Eval is what a unit of function f drives, the one statement of each
// function's logic that every simulator of the netlist uses. in holds the
// levels of the unit's n inputs, bit i for input i in the order of Unit.In
// (for a flip-flop: D, CLK, nPRE, nCLR); enabled is the level of a
// buffer's enable, already compared with its polarity; st is a flip-flop's
// state. It returns whether the output drives (a disabled tri-state buffer
// floats), the output (Q) and nQ levels, and the flip-flop's next state.
// With nPRE and nCLR both low a 74LS74 drives Q and nQ both high, as the
// real part does.
func (f Func) Eval(in uint32, n int, enabled bool, st DFFState) (drive, out, outN bool, next DFFState) {
	switch f {
	case FuncNAND:
		return true, in != 1<<n-1, false, st
	case FuncOR:
		return true, in != 0, false, st
	case FuncBuffer:
		return enabled, in&1 != 0, false, st
	}
	d, clk, pre, clr := in&1 != 0, in&2 != 0, in&4 != 0, in&8 != 0
	q := st.Q
	switch {
	case !pre && !clr:
		return true, true, true, DFFState{q, clk}
	case !pre:
		q = true
	case !clr:
		q = false
	case clk && !st.Clk:
		q = d
	}
	return true, q, !q, DFFState{q, clk}
}

// Unit is one gate, buffer or flip-flop inside a part. Pins are datasheet
// pin numbers.
type Unit struct {
	Func Func
	In   []int // NAND/OR inputs; Buffer: [A]; DFF: [D, CLK]
	Out  int   // output; DFF: Q
	// Buffer only: the enable pin (0 = always enabled) and its polarity.
	Enable    int
	EnableLow bool
	// DFF only.
	NQ, Preset, Clear int // nQ output, active-low preset and clear
}

// Delay is a propagation delay from the datasheets, at VCC = 5 V and
// TA = 25 °C into the sheet's test load (15 pF, or 45 pF for the buffers).
// Typ is the mean of the typical low-to-high and high-to-low figures and
// Max the larger guaranteed maximum, from Texas Instruments' SN74LS sheets.
// Min: LS sheets guarantee no minimum except Fairchild's DM74LS20 (3 ns at
// 15 pF), so Min is that 3 ns for the gates and buffers and, by the same
// ratio to the typical, 6 ns for the 74LS74 — an assumption, used only by
// the timed emulator's fastest corner and its random spread.
type Delay struct{ Min, Typ, Max time.Duration }

// Part is a catalogue entry: a 74LS chip or a board-level component.
type Part struct {
	Name        string // "74LS20"
	Description string
	Pins        []Pin
	Units       []Unit
	// Delay is input-to-output (buffers: data-to-output; flip-flops:
	// preset/clear-to-output). ClockDelay is clock-to-output for
	// flip-flops; EnableDelay is enable-to-output for tri-state buffers
	// (output enable and disable times, tPZx and tPxZ).
	Delay, ClockDelay, EnableDelay Delay
	// KiCad names: the symbol in KiCad's standard library and a footprint.
	Symbol    string
	Footprint string
	// Maker and MPN name a part to buy where the part is a standard one
	// (empty where any part answering Name and Description will do).
	Maker, MPN string
	// LCSC is the part's number in JLCPCB's assembly catalogue (LCSC's),
	// set only where one was found tied to this exact MPN; docs/board.md
	// says where, and which remain to be confirmed.
	LCSC string
	// ICC is a chip's supply current, in amperes, at its datasheet's
	// maximum (the largest of ICCH, ICCL and, for three-state parts, ICCZ,
	// at VCC 5.25 V): what the boards' supply copper must carry (kicad's
	// DC check). Output currents into loads come on top.
	ICC float64
	// Hold and RMax are a resettable fuse's datasheet figures: the current
	// it carries without tripping at 23 °C, and its largest resistance
	// (R1max, one hour after a trip), in series with everything the board
	// draws (kicad's DC check).
	Hold, RMax float64
	// CablePin, for a cable connector that is not itself a DB-25, is the
	// connector's pin that carries DB-25 pin n of the PC's port (nil: pin
	// n is pin n).
	CablePin func(n int) int
}

// Logic reports whether the part has logic for the emulator to simulate.
func (p *Part) Logic() bool { return len(p.Units) > 0 }

// PinByNum returns the pin with the given number.
func (p *Part) PinByNum(n int) (Pin, bool) {
	for _, pin := range p.Pins {
		if pin.Num == n {
			return pin, true
		}
	}
	return Pin{}, false
}

func ns(min, typ, max int) Delay {
	return Delay{time.Duration(min) * time.Nanosecond, time.Duration(typ) * time.Nanosecond, time.Duration(max) * time.Nanosecond}
}

func dip14(names [15]string, types [15]PinType) []Pin {
	pins := make([]Pin, 14)
	for i := range pins {
		pins[i] = Pin{i + 1, names[i+1], types[i+1]}
	}
	return pins
}

const (
	in  = PinInput
	out = PinOutput
	tri = PinTriState
	pwr = PinPower
	gnd = PinGround
	nc  = PinNC
)

// The part library: every chip the boards use, with real pinouts.
var (
	// Dual 4-input NAND: 1,2,4,5 -> 6; 9,10,12,13 -> 8.
	LS20 = &Part{
		Name: "74LS20", Description: "dual 4-input NAND gate",
		Pins: dip14([15]string{"", "1A", "1B", "NC", "1C", "1D", "1Y", "GND", "2Y", "2A", "2B", "NC", "2C", "2D", "VCC"},
			[15]PinType{0, in, in, nc, in, in, out, gnd, out, in, in, nc, in, in, pwr}),
		Units: []Unit{{Func: FuncNAND, In: []int{1, 2, 4, 5}, Out: 6}, {Func: FuncNAND, In: []int{9, 10, 12, 13}, Out: 8}},
		// SN74LS20: tPLH 9/15, tPHL 10/15 ns (typ/max).
		Delay: ns(3, 10, 15), Symbol: "74xx:74LS20", Footprint: "Package_DIP:DIP-14_W7.62mm",
		Maker: "Texas Instruments", MPN: "SN74LS20N", LCSC: "C133588",
		// SN74LS20: ICCH 0.8, ICCL 2.2 mA max.
		ICC: 2.2e-3,
	}
	// Dual 4-input NAND buffer (high fan-out), same pinout as the 74LS20.
	LS40 = &Part{
		Name: "74LS40", Description: "dual 4-input NAND buffer",
		Pins:  LS20.Pins,
		Units: LS20.Units,
		// SN74LS40: tPLH 12/24, tPHL 12/24 ns into 45 pF. Into long
		// cables its edges slow far beyond this: see emu's cable model.
		Delay: ns(3, 12, 24), Symbol: "74xx:74LS40", Footprint: "Package_DIP:DIP-14_W7.62mm",
		Maker: "Texas Instruments", MPN: "SN74LS40N",
		// SN74LS40: ICCH 1, ICCL 6 mA max.
		ICC: 6e-3,
	}
	// 8-input NAND: 1,2,3,4,5,6,11,12 -> 8.
	LS30 = &Part{
		Name: "74LS30", Description: "8-input NAND gate",
		Pins: dip14([15]string{"", "A", "B", "C", "D", "E", "F", "GND", "Y", "NC", "NC", "G", "H", "NC", "VCC"},
			[15]PinType{0, in, in, in, in, in, in, gnd, out, nc, nc, in, in, nc, pwr}),
		Units: []Unit{{Func: FuncNAND, In: []int{1, 2, 3, 4, 5, 6, 11, 12}, Out: 8}},
		// SN74LS30: tPLH 8/15, tPHL 13/20 ns.
		Delay: ns(3, 11, 20), Symbol: "74xx:74LS30", Footprint: "Package_DIP:DIP-14_W7.62mm",
		Maker: "Texas Instruments", MPN: "SN74LS30N",
		// SN74LS30: ICCH 0.5, ICCL 1.1 mA max.
		ICC: 1.1e-3,
	}
	// Quad 2-input OR: 1,2->3; 4,5->6; 9,10->8; 12,13->11.
	LS32 = &Part{
		Name: "74LS32", Description: "quad 2-input OR gate",
		Pins: dip14([15]string{"", "1A", "1B", "1Y", "2A", "2B", "2Y", "GND", "3Y", "3A", "3B", "4Y", "4A", "4B", "VCC"},
			[15]PinType{0, in, in, out, in, in, out, gnd, out, in, in, out, in, in, pwr}),
		Units: []Unit{
			{Func: FuncOR, In: []int{1, 2}, Out: 3}, {Func: FuncOR, In: []int{4, 5}, Out: 6},
			{Func: FuncOR, In: []int{9, 10}, Out: 8}, {Func: FuncOR, In: []int{12, 13}, Out: 11},
		},
		// SN74LS32: tPLH 14/22, tPHL 14/22 ns.
		Delay: ns(3, 14, 22), Symbol: "74xx:74LS32", Footprint: "Package_DIP:DIP-14_W7.62mm",
		Maker: "Texas Instruments", MPN: "SN74LS32N", LCSC: "C273644",
		// SN74LS32: ICCH 6.2, ICCL 9.8 mA max.
		ICC: 9.8e-3,
	}
	// Dual D flip-flop with preset and clear.
	LS74 = &Part{
		Name: "74LS74", Description: "dual D flip-flop, async preset and clear",
		Pins: dip14([15]string{"", "~{1CLR}", "1D", "1CLK", "~{1PRE}", "1Q", "~{1Q}", "GND", "~{2Q}", "2Q", "~{2PRE}", "2CLK", "2D", "~{2CLR}", "VCC"},
			[15]PinType{0, in, in, in, in, out, out, gnd, out, out, in, in, in, in, pwr}),
		Units: []Unit{
			{Func: FuncDFF, In: []int{2, 3}, Out: 5, NQ: 6, Preset: 4, Clear: 1},
			{Func: FuncDFF, In: []int{12, 11}, Out: 9, NQ: 8, Preset: 10, Clear: 13},
		},
		// SN74LS74A: from CLR, PRE or CLK to Q or nQ, tPLH 13/25 and tPHL
		// 25/40 ns; the sheet gives one figure for all three inputs.
		Delay: ns(6, 19, 40), ClockDelay: ns(6, 19, 40), Symbol: "74xx:74LS74", Footprint: "Package_DIP:DIP-14_W7.62mm",
		Maker: "Texas Instruments", MPN: "SN74LS74AN",
		// SN74LS74A: ICC 8 mA max.
		ICC: 8e-3,
	}
	// Quad tri-state buffer, active-low enables. SN74LS125A: tPLH 9/15,
	// tPHL 7/18; tPZH 12/20, tPZL 15/25, tPHZ and tPLZ 20 max ns; ICC 20
	// mA max.
	LS125 = quadBuffer("74LS125", "quad tri-state buffer, active-low enable", "SN74LS125AN", true, ns(3, 8, 18), ns(3, 15, 25), 20e-3)
	// Quad tri-state buffer, active-high enables. SN74LS126A: tPLH 9/15,
	// tPHL 8/18; tPZH 16/25, tPZL 21/35, tPHZ and tPLZ 25 max ns; ICC 22
	// mA max.
	LS126 = quadBuffer("74LS126", "quad tri-state buffer, active-high enable", "SN74LS126AN", false, ns(3, 9, 18), ns(3, 19, 35), 22e-3)
	// Octal tri-state buffer/line driver.
	LS244 = &Part{
		Name: "74LS244", Description: "octal tri-state buffer / line driver",
		Pins: func() []Pin {
			names := [21]string{"", "~{1G}", "1A1", "2Y4", "1A2", "2Y3", "1A3", "2Y2", "1A4", "2Y1", "GND",
				"2A1", "1Y4", "2A2", "1Y3", "2A3", "1Y2", "2A4", "1Y1", "~{2G}", "VCC"}
			types := [21]PinType{0, in, in, tri, in, tri, in, tri, in, tri, gnd, in, tri, in, tri, in, tri, in, tri, in, pwr}
			pins := make([]Pin, 20)
			for i := range pins {
				pins[i] = Pin{i + 1, names[i+1], types[i+1]}
			}
			return pins
		}(),
		Units: []Unit{
			{Func: FuncBuffer, In: []int{2}, Out: 18, Enable: 1, EnableLow: true},
			{Func: FuncBuffer, In: []int{4}, Out: 16, Enable: 1, EnableLow: true},
			{Func: FuncBuffer, In: []int{6}, Out: 14, Enable: 1, EnableLow: true},
			{Func: FuncBuffer, In: []int{8}, Out: 12, Enable: 1, EnableLow: true},
			{Func: FuncBuffer, In: []int{11}, Out: 9, Enable: 19, EnableLow: true},
			{Func: FuncBuffer, In: []int{13}, Out: 7, Enable: 19, EnableLow: true},
			{Func: FuncBuffer, In: []int{15}, Out: 5, Enable: 19, EnableLow: true},
			{Func: FuncBuffer, In: []int{17}, Out: 3, Enable: 19, EnableLow: true},
		},
		// SN74LS244: tPLH 12/18, tPHL 12/18; tPZL 20/30, tPZH 15/23,
		// tPLZ 15/25, tPHZ 10/18 ns into 45 pF (5 pF for disable).
		Delay: ns(3, 12, 18), EnableDelay: ns(3, 15, 30), Symbol: "74xx:74LS244", Footprint: "Package_DIP:DIP-20_W7.62mm",
		Maker: "Texas Instruments", MPN: "SN74LS244N", LCSC: "C352965",
		// SN74LS244: ICCH 23, ICCL 46, ICCZ 54 mA max.
		ICC: 54e-3,
	}
	// DB25 is the cable connector: one per PE, pins numbered as on the PC's
	// port (a straight-through cable).
	DB25 = &Part{
		Name:        "DB-25 male, right-angle PCB",
		Description: "D-sub 25-way plug (male pins), right-angle through-hole, 2.77 x 2.84 mm pitch, pins 7.70 mm from the board edge: one PE's printer cable",
		Pins:        contacts(25),
		// Male: the PC's port is female, and a standard straight-through
		// DB-25 male-to-female extension cable plugs its male end into the
		// PC and its female end onto the board, pin n to pin n.
		Symbol: "Connector:DB25_Pins", Footprint: "Connector_Dsub:DSUB-25_Pins_Horizontal_P2.77x2.84mm_EdgePinOffset7.70mm_Housed_MountingHolesOffset9.12mm",
		Maker: "CONNFLY", MPN: "DS1037-25MNAKT74-0CC", LCSC: "C75751",
	}
)

// IDC26 is the cable connector of the boards beyond 8 PEs: a 2×13 boxed
// header (a third of a DB-25's length, and needing no board edge) for a
// flat 26-way ribbon whose other end is a DB-25: the PC parallel-port
// bracket cable, or a ribbon crimped onto a DB-25 male IDC plug that goes
// straight into the PC's port. Crimped flat, ribbon wire k is header pin k
// and the DB-25's pins in the order 1, 14, 2, 15, …, 13 (RibbonPin); wire
// 26 is left free.
var IDC26 = &Part{
	Name:        "IDC-26 2x13 box header, 2.54 mm, for the AT-pinout bracket cable",
	Description: "2x13 boxed pin header, 2.54 mm pitch, vertical through-hole, keyed: one PE's IDC-26 to DB-25 ribbon cable (AT/Everex pinout), pin 1 at the square pad",
	Pins:        contacts(26),
	Symbol:      "Connector_Generic:Conn_02x13_Odd_Even", Footprint: "Connector_IDC:IDC-Header_2x13_P2.54mm_Vertical",
	Maker: "Würth Elektronik", MPN: "61202621621", LCSC: "C17586777",
	CablePin: RibbonPin,
}

// contacts are a connector's n pins, numbered from 1, unnamed.
func contacts(n int) []Pin {
	pins := make([]Pin, n)
	for i := range pins {
		pins[i] = Pin{i + 1, "", PinPassive}
	}
	return pins
}

// RibbonPin is the IDC-26 header pin that carries DB-25 pin n through a
// flat ribbon crimped onto both (the common "AT" bracket pinout): 2n-1 for
// the DB-25's top row (n ≤ 13), 2(n-13) for its bottom row.
func RibbonPin(n int) int {
	if n <= 13 {
		return 2*n - 1
	}
	return 2 * (n - 13)
}

// The Raspberry Pi adapter's parts (PiAdapter).
var (
	// DB25Socket is the adapter's port: female, as a PC's is, so the same
	// straight-through cable joins it to the board.
	DB25Socket = &Part{
		Name:        "DB-25 female, right-angle PCB",
		Description: "D-sub 25-way socket (female), right-angle through-hole, 2.77 x 2.84 mm pitch, pins 7.70 mm from the board edge: the adapter's printer port",
		Pins:        DB25.Pins,
		Symbol:      "Connector:DB25_Socket", Footprint: "Connector_Dsub:DSUB-25_Socket_Horizontal_P2.77x2.84mm_EdgePinOffset7.70mm_Housed_MountingHolesOffset9.12mm",
		Maker: "CONNFLY", MPN: "DS1037-25FNAKT74-0CC", LCSC: "C77838",
	}
	// PiHeader40 takes a 40-way female-female ribbon (the Pi's GPIO
	// extension cable) to the Raspberry Pi's header, pin n to pin n.
	PiHeader40 = &Part{
		Name: "2x20 header", Description: "2x20 pin header, 2.54 mm, for a ribbon to the Raspberry Pi's 40-pin header",
		Pins: func() []Pin {
			pins := make([]Pin, 40)
			for i := range pins {
				pins[i] = Pin{i + 1, "", PinPassive}
			}
			return pins
		}(),
		Symbol: "Connector_Generic:Conn_02x20_Odd_Even", Footprint: "Connector_PinHeader_2.54mm:PinHeader_2x20_P2.54mm_Vertical",
		Maker: "Samtec", MPN: "TSW-120-07-G-D",
	}
	// LVC245 is the level shifter: an SN74LVC245A (the N package is a
	// 20-pin DIP) on 3.3 V, whose inputs take 5 V; DIR high passes A to B.
	// The 74x245 pinout is KiCad's 74LS245 symbol's.
	LVC245 = &Part{
		Name: "74LVC245", Description: "octal bus transceiver, 3.3 V, 5 V-tolerant inputs (SN74LVC245AN)",
		Pins: []Pin{{1, "A->B", in}, {2, "A0", in}, {3, "A1", in}, {4, "A2", in}, {5, "A3", in}, {6, "A4", in}, {7, "A5", in},
			{8, "A6", in}, {9, "A7", in}, {10, "GND", gnd}, {11, "B7", tri}, {12, "B6", tri}, {13, "B5", tri}, {14, "B4", tri},
			{15, "B3", tri}, {16, "B2", tri}, {17, "B1", tri}, {18, "B0", tri}, {19, "CE", in}, {20, "VCC", pwr}},
		Symbol: "74xx:74LS245", Footprint: "Package_DIP:DIP-20_W7.62mm",
		Maker: "Texas Instruments", MPN: "SN74LVC245AN",
		// SN74LVC245A: ICC 10 µA max (at 3.6 V).
		ICC: 10e-6,
	}
)

// Board-level parts without logic (the emulator ignores them): what a real
// board needs beyond the gates. Name is the value printed in the BOM.
var (
	// Cap100n decouples one chip's supply pins.
	Cap100n = buy(twoPin("100nF", "ceramic capacitor, 50 V, X7R, 5 mm lead pitch: a chip's decoupling", "1", "2", "Device:C", "Capacitor_THT:C_Disc_D5.0mm_W2.5mm_P5.00mm"),
		"Vishay", "K104K15X7RF5TH5") // TH5: 5.0 mm leads (TL2 is the 2.5 mm version)
	// Cap10u is a bulk capacitor: at the power input, and one for every
	// bulkPer chips of a group, beside them.
	Cap10u = buy(twoPin("10uF", "aluminium electrolytic capacitor, 25 V, 5 mm diameter, 2 mm lead pitch, + lead in the square pad: bulk, at the power input and beside each group of chips", "+", "-", "Device:C_Polarized", "Capacitor_THT:CP_Radial_D5.0mm_P2.00mm"),
		"Panasonic", "ECA-1EM100")
	// R220 limits a status LED's current: (VOH 3.4 V - VF 2 V) / 220 Ω ≈ 6 mA
	// from a 74LS244 output (rated for 15 mA).
	R220 = buy(twoPin("220R", "resistor, 1/4 W, 5 %, axial: a status LED's current limit", "~", "~", "Device:R", "Resistor_THT:R_Axial_DIN0207_L6.3mm_D2.5mm_P10.16mm_Horizontal"),
		"Yageo", "CFR-25JB-52-220R")
	// R1k limits the blue power LED's current: (5 V - VF 3.1 V) / 1 kΩ ≈ 2 mA.
	R1k = buy(twoPin("1k", "resistor, 1/4 W, 5 %, axial: the power LED's current limit", "~", "~", "Device:R", "Resistor_THT:R_Axial_DIN0207_L6.3mm_D2.5mm_P10.16mm_Horizontal"),
		"Yageo", "CFR-25JB-52-1K")
	// LEDBlue is the power light: blue, "to avoid confusion with the rest of
	// the status display" (seed §3.3).
	LEDBlue = buy(twoPin("LED blue, 5 mm", "5 mm blue LED, the power light: cathode (flat side, short lead) in the square pad 1, anode in pad 2", "K", "A", "Device:LED", "LED_THT:LED_D5.0mm"),
		"Everlight", "333-2SUBC/S400-A4", "C282146")
	// LEDBicolour is a PE's status light: a 3-lead common-cathode red/green LED.
	LEDBicolour = &Part{
		Name:        "LED red/green, common cathode",
		Description: "5 mm bi-colour LED, 3 leads, common cathode in the middle: green anode in the square pad 1, cathode in pad 2, red anode in pad 3",
		Pins:        []Pin{{1, "A1", PinPassive}, {2, "K", PinPassive}, {3, "A2", PinPassive}},
		Symbol:      "Device:LED_Dual_AKA", Footprint: "LED_THT:LED_D5.0mm-3",
	}
	// PowerIn takes a regulated 5 V supply: pin 1 +5 V, pin 2 ground.
	PowerIn = buy(twoPin("Screw terminal 2-way, 5.08 mm", "2-way PCB screw terminal, 5.08 mm pitch: regulated 5 V in, pin 1 +5 V, pin 2 ground", "Pin_1", "Pin_2", "Connector:Screw_Terminal_01x02", "TerminalBlock_Phoenix:TerminalBlock_Phoenix_MKDS-1,5-2-5.08_1x02_P5.08mm_Horizontal"),
		"Phoenix Contact", "1715721", "C5183929")
)

// Pins of LEDBicolour: anodes for green and red, and the common cathode.
var (
	ledAnode   = [2]int{1, 3}
	ledCathode = 2
)

func twoPin(value, desc, n1, n2, symbol, footprint string) *Part {
	return &Part{
		Name: value, Description: desc,
		Pins:   []Pin{{1, n1, PinPassive}, {2, n2, PinPassive}},
		Symbol: symbol, Footprint: footprint,
	}
}

// buy names the part to buy for p, and its LCSC number where one was
// found (at most one).
func buy(p *Part, maker, mpn string, lcsc ...string) *Part {
	p.Maker, p.MPN = maker, mpn
	if len(lcsc) > 0 {
		p.LCSC = lcsc[0]
	}
	return p
}

func quadBuffer(name, desc, mpn string, low bool, delay, enable Delay, icc float64) *Part {
	names := [15]string{"", "1OE", "1A", "1Y", "2OE", "2A", "2Y", "GND", "3Y", "3A", "3OE", "4Y", "4A", "4OE", "VCC"}
	if low {
		for _, i := range []int{1, 4, 10, 13} {
			names[i] = "~{" + names[i] + "}"
		}
	}
	return &Part{
		Name: name, Description: desc,
		Pins: dip14(names, [15]PinType{0, in, in, tri, in, in, tri, gnd, tri, in, in, tri, in, in, pwr}),
		Units: []Unit{
			{Func: FuncBuffer, In: []int{2}, Out: 3, Enable: 1, EnableLow: low},
			{Func: FuncBuffer, In: []int{5}, Out: 6, Enable: 4, EnableLow: low},
			{Func: FuncBuffer, In: []int{9}, Out: 8, Enable: 10, EnableLow: low},
			{Func: FuncBuffer, In: []int{12}, Out: 11, Enable: 13, EnableLow: low},
		},
		Delay: delay, EnableDelay: enable, Symbol: "74xx:" + name, Footprint: "Package_DIP:DIP-14_W7.62mm",
		Maker: "Texas Instruments", MPN: mpn, ICC: icc,
	}
}

// Parts lists the logic parts of the library, for tools that check pinouts.
var Parts = []*Part{LS20, LS30, LS32, LS40, LS74, LS125, LS126, LS244}

// Passives lists the board-level parts without logic.
var Passives = append([]*Part{DB25, IDC26, Cap100n, Cap10u, R220, R1k, LEDBlue, LEDBicolour, PowerIn, DB25Socket, PiHeader40, LVC245}, protection...)
