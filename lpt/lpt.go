// Package lpt is the PC side of TTL_PAPERS: the standard (SPP) parallel printer
// port as the driver sees it.
//
// It holds the one table of the port's 17 signal lines (DB-25 pin, register,
// bit, and whether the register bit is inverted on the pin), the TTL_PAPERS
// names the seed gives those bits, and the small Port interface that every
// backend implements: the emulated ports of package emu, and the real ports
// of lpt/linuxlpt (ioperm, ppdev, /dev/port) and lpt/periphlpt (periph.io
// GPIO); lpt/lpttest wraps any port for tests. Everything else in the project —
// the emulator's pin model, the board netlist's cable connectors, selftest
// diagnoses — derives pin numbers and masks from the table here.
package lpt

import (
	"fmt"
	"strings"
	"time"
)

// Register offsets from the port's base address.
const (
	DataOffset    = 0
	StatusOffset  = 1
	ControlOffset = 2
)

// Common base addresses (LPT1 is usually 0x378).
const (
	BaseLPT1 = 0x378
	BaseLPT2 = 0x278
	BaseLPT3 = 0x3bc
)

// Status register bits. Bits 0-2 are not pins and read as anything.
const (
	StatusError    = 0x08 // pin 15, nError
	StatusSelect   = 0x10 // pin 13, Select
	StatusPaperOut = 0x20 // pin 12, PaperOut
	StatusAck      = 0x40 // pin 10, nAck
	StatusBusy     = 0x80 // pin 11, Busy (inverted: pin high reads 0)
	StatusPins     = 0xf8 // the bits that are pins
)

// Control register bits. 0x10 (IRQ enable) and 0x20 (input direction) must
// never be set for TTL_PAPERS.
const (
	ControlStrobe    = 0x01 // pin 1, nStrobe (inverted)
	ControlAutoFd    = 0x02 // pin 14, nAutoFd (inverted)
	ControlInit      = 0x04 // pin 16, nInit
	ControlSelectIn  = 0x08 // pin 17, nSelectIn (inverted)
	ControlIRQEnable = 0x10
	ControlInput     = 0x20
	ControlPins      = 0x0f // the bits that are pins
)

// TTL_PAPERS signal names (seed table 1). The seed's P_ prefix is dropped.
const (
	// Data register.
	D0, D1, D2, D3 = 0x01, 0x02, 0x04, 0x08 // this PE's NAND contribution
	DataMask       = 0x0f                   // P_D0..P_D3
	LG             = 0x10                   // P_LG: LED green
	LR             = 0x20                   // P_LR: LED red
	S0             = 0x40                   // P_S0: strobe ready to 0
	S1             = 0x80                   // P_S1: strobe ready to 1
	Strobes        = S0 | S1
	// Transparent is the data byte of a PE that takes no part: both strobes
	// and all data lines high, LED dark. An unplugged cable reads the same.
	Transparent = S1 | S0 | DataMask

	// Status register.
	InputShift = 3    // NAND result = (status >> InputShift) & DataMask
	RDY        = 0x80 // P_RDY: toggling barrier-ready flag (when SEL=0)
	INT        = 0x80 // P_INT: interrupt pending (when SEL=1)

	// Control register.
	NAK = ControlStrobe // P_NAK: 1 = not acknowledging an interrupt
	IRQ = ControlAutoFd // P_IRQ: 1 = this PE requests a parallel interrupt
	SEL = ControlInit   // P_SEL: 1 = Busy shows the interrupt flag
)

// MaxPEs is the most PEs a TTL_PAPERS board connects: the seed builds its
// trees of 74LS30s and 74LS32s up to 32 PEs and recommends programmable
// logic beyond. The board sizes (package hw), the driver's PE ids and the
// emulator all derive their limits from it.
const MaxPEs = 32

// Register identifies one of the three port registers.
type Register uint8

const (
	Data Register = iota
	Status
	Control
)

func (r Register) String() string {
	switch r {
	case Data:
		return "data"
	case Status:
		return "status"
	case Control:
		return "control"
	}
	return fmt.Sprintf("Register(%d)", uint8(r))
}

// Line is one signal line of the port: a DB-25 pin and its register bit.
type Line struct {
	Name     string   // standard name: "D6", "nStrobe", "Busy", ...
	Pin      int      // DB-25 pin number
	Reg      Register // register holding the bit
	Mask     uint8    // the bit
	Inverted bool     // pin level is the complement of the register bit
	Signal   string   // TTL_PAPERS use (seed table 1)
}

// Output reports whether the PC drives the line (data and control lines).
func (l Line) Output() bool { return l.Reg != Status }

func (l Line) String() string { return fmt.Sprintf("%s (DB-25 pin %d)", l.Name, l.Pin) }

// Lines is the table of the 17 signal lines, in DB-25 pin order. Pins 18-25
// are ground.
var Lines = [...]Line{
	{"nStrobe", 1, Control, ControlStrobe, true, "P_NAK"},
	{"D0", 2, Data, D0, false, "P_D0"},
	{"D1", 3, Data, D1, false, "P_D1"},
	{"D2", 4, Data, D2, false, "P_D2"},
	{"D3", 5, Data, D3, false, "P_D3"},
	{"D4", 6, Data, LG, false, "P_LG"},
	{"D5", 7, Data, LR, false, "P_LR"},
	{"D6", 8, Data, S0, false, "P_S0"},
	{"D7", 9, Data, S1, false, "P_S1"},
	{"nAck", 10, Status, StatusAck, false, "P_I3"},
	{"Busy", 11, Status, StatusBusy, true, "P_RDY/P_INT"},
	{"PaperOut", 12, Status, StatusPaperOut, false, "P_I2"},
	{"Select", 13, Status, StatusSelect, false, "P_I1"},
	{"nAutoFd", 14, Control, ControlAutoFd, true, "P_IRQ"},
	{"nError", 15, Status, StatusError, false, "P_I0"},
	{"nInit", 16, Control, ControlInit, false, "P_SEL"},
	{"nSelectIn", 17, Control, ControlSelectIn, true, "reserved"},
}

// GroundPins are the DB-25 ground pins.
var GroundPins = [...]int{18, 19, 20, 21, 22, 23, 24, 25}

// LineByName finds a line by its standard name (case-insensitive), its
// TTL_PAPERS signal name with or without the P_ prefix (Busy carries both
// P_RDY and P_INT), or "pin<N>".
func LineByName(name string) (Line, error) {
	for _, l := range Lines {
		if equalFold(l.Name, name) || equalFold(l.Signal, name) || equalFold(fmt.Sprintf("pin%d", l.Pin), name) {
			return l, nil
		}
		for sig := range strings.SplitSeq(l.Signal, "/") {
			if equalFold(sig, name) || equalFold(sig, "P_"+name) {
				return l, nil
			}
		}
	}
	return Line{}, fmt.Errorf("lpt: no port line named %q: use D0-D7, nStrobe, nAutoFd, nInit, nSelectIn, nError, Select, PaperOut, nAck or Busy", name)
}

// LineFor finds the line carrying bit mask of register r — LineFor(Data,
// S0) is D6 — so that code naming lines by the signal they carry derives
// them from the table. ok is false when the bit is not a pin.
func LineFor(r Register, mask uint8) (l Line, ok bool) {
	for _, l := range Lines {
		if l.Reg == r && l.Mask == mask {
			return l, true
		}
	}
	return Line{}, false
}

// LineByPin finds the line on a DB-25 pin.
func LineByPin(pin int) (Line, bool) {
	for _, l := range Lines {
		if l.Pin == pin {
			return l, true
		}
	}
	return Line{}, false
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// Pins is a set of DB-25 pin levels: bit p is 1 when pin p is high.
type Pins uint32

// High reports whether pin p is high; a pin number outside 0-31 is never
// high.
func (p Pins) High(pin int) bool { return p&(1<<uint(pin)) != 0 }

// With returns p with pin set to level; a pin number outside 0-31 leaves p
// as it is.
func (p Pins) With(pin int, high bool) Pins {
	if high {
		return p | 1<<uint(pin)
	}
	return p &^ (1 << uint(pin))
}

// OutputPins returns the levels of the 12 PC-driven pins for the given data
// and control register values, applying the SPP inversions.
func OutputPins(data, control uint8) Pins {
	return dataPins[data] | controlPins[control&ControlPins]
}

var dataPins, controlPins = func() (d [256]Pins, c [16]Pins) {
	for i := range d {
		d[i] = regPins(Data, uint8(i))
	}
	for i := range c {
		c[i] = regPins(Control, uint8(i))
	}
	return
}()

// regPins returns the pin levels of the lines of one register.
func regPins(r Register, v uint8) Pins {
	var p Pins
	for _, l := range Lines {
		if l.Reg == r && (v&l.Mask != 0) != l.Inverted {
			p |= 1 << l.Pin
		}
	}
	return p
}

// StatusFromPins returns the status register a PC reads when its five input
// pins are at the given levels. Bits 0-2 read as 1, as on most ISA ports.
func StatusFromPins(p Pins) uint8 {
	s := uint8(0x07)
	for _, l := range Lines {
		if l.Reg == Status && p.High(l.Pin) != l.Inverted {
			s |= l.Mask
		}
	}
	return s
}

// InputPins is the set of the five status pins.
var InputPins = func() Pins {
	var p Pins
	for _, l := range Lines {
		if l.Reg == Status {
			p |= 1 << l.Pin
		}
	}
	return p
}()

// Port is a parallel port as the TTL_PAPERS driver uses it: one byte-wide
// operation per call, no error on the per-operation path. A backend that can
// fail at run time (an ioctl, a GPIO write) records the first failure and
// reports it from Err, which the driver checks at operation boundaries and
// while waiting.
type Port interface {
	WriteData(v uint8)
	ReadData() uint8
	ReadStatus() uint8
	WriteControl(v uint8)
	ReadControl() uint8
	// Err returns the first error the port met, or nil. It is sticky.
	Err() error
	// Close releases the port. It does not change the registers.
	Close() error
}

// StallExplainer is implemented by ports that can say why a barrier has not
// completed — the emulator knows which PEs have not arrived; real hardware
// does not. The driver adds the explanation to deadline errors.
type StallExplainer interface {
	ExplainStall() string
}

// Waiter is an optional capability of a Port: blocking until the board may
// have changed, instead of polling its status register. The emulated board
// implements it (a futex on a board shared between processes, Go
// primitives in-process), so that a waiting PE gives its CPU to the PE it
// waits for; real ports do not, and the driver keeps polling them.
type Waiter interface {
	// Wait blocks until the bits in mask of the status register may
	// differ from those in last, or the board's interrupt flag may have
	// changed (which the status shows only with P_SEL=1), or timeout has
	// passed, or done is closed (nil: never). It reports whether it
	// returned because something may have changed; returning early is
	// allowed, so the caller reads the status again either way. An
	// implementation keeps each block short (a few milliseconds) so that
	// the caller's checks of deadlines and errors keep their pace.
	Wait(last, mask uint8, timeout time.Duration, done <-chan struct{}) bool
}
